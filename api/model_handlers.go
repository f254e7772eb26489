package api

import (
	"net/http"
	"strings"

	"github.com/toolmark/toolmark"
)

// handleModels lists the models a turn may name (GET /api/models).
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	ms := s.cfg.Models
	if ms == nil {
		ms = toolmark.Models{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": ms, "default": ms.Default().ID})
}

// checkModel refuses a model id the server does not offer, naming the
// ones it does; "" (no choice) passes.
func (s *Server) checkModel(id string) error {
	if id == "" {
		return nil
	}
	if _, ok := s.cfg.Models.Find(id); ok {
		return nil
	}
	ids := s.cfg.Models.IDs()
	if len(ids) == 0 {
		return toolmark.Errorf(toolmark.EINVALID, "this server offers no choice of model; leave model out")
	}
	return toolmark.Errorf(toolmark.EINVALID, "unknown model; use one of: %s", strings.Join(ids, ", "))
}
