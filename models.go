package toolmark

import "slices"

// ModelInfo is one model a server offers (GET /api/models): its id, what
// people see, its provider and what it accepts besides text.
type ModelInfo struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	Provider  string `json:"provider"`
	Images    bool   `json:"images"`    // takes images
	Documents bool   `json:"documents"` // takes documents (PDF) as they are
	Default   bool   `json:"default"`   // answers a turn that names no model in a conversation without one
}

// Models is the models of a server, the default among them.
type Models []ModelInfo

// Find returns the model of an id.
func (ms Models) Find(id string) (ModelInfo, bool) {
	i := slices.IndexFunc(ms, func(m ModelInfo) bool { return m.ID == id })
	if i < 0 {
		return ModelInfo{}, false
	}
	return ms[i], true
}

// Default returns the default model (the first when none is marked).
func (ms Models) Default() ModelInfo {
	if i := slices.IndexFunc(ms, func(m ModelInfo) bool { return m.Default }); i >= 0 {
		return ms[i]
	}
	if len(ms) == 0 {
		return ModelInfo{}
	}
	return ms[0]
}

// IDs returns the models' ids, in order.
func (ms Models) IDs() []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}
