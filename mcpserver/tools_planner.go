package mcpserver

// plannerTools are the planner session's tools (filled in next).
func plannerTools(s *Server) {}
