package mcpserver

// reviewerTools are the reviewer session's tools (filled in next).
func reviewerTools(s *Server) {}
