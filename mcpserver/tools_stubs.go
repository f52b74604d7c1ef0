package mcpserver

// The tool sets that are filled in next (helpers' parts).

func reviewerTools(s *Server)   {}
func plannerTools(s *Server)    {}
func humanTools(s *Server)      {}
func (s *Server) addResources() {}
