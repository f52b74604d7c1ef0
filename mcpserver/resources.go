package mcpserver

// addResources adds the resources of the session (filled in next).
func (s *Server) addResources() {}
