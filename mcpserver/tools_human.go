package mcpserver

// humanTools are the human session's tools (filled in next).
func humanTools(s *Server) {}
