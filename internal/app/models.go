package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolmark/toolmark"
)

// modelIDPattern is what a model id may be: it travels in URLs, JSON and
// exports as it is.
var modelIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

// modelFile is one entry of a models file (toolmark serve --models).
type modelFile struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	Provider   string `json:"provider"`
	Name       string `json:"name"`
	BaseURL    string `json:"baseUrl"`
	APIKeyEnv  string `json:"apiKeyEnv"`
	APIVersion string `json:"apiVersion"`
	Images     bool   `json:"images"`
	Documents  bool   `json:"documents"`
	Default    bool   `json:"default"`
}

// ParseModels reads a models file: a JSON list of models, each with an
// id, a label, a provider (demo, openai, azure, anthropic or mistral), the
// model's name, its base URL, the name of the environment variable holding
// its key (read with getenv), and whether it takes images and documents;
// at most one is the default (else the first). Each error is one sentence
// naming the model.
func ParseModels(data []byte, getenv func(string) string) ([]ModelConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var list []modelFile
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("the models list is not a JSON list of models: %w", err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("the models list is empty; name at least one model")
	}
	seen := map[string]bool{}
	defaults := 0
	out := make([]ModelConfig, 0, len(list))
	for _, f := range list {
		m, err := f.config(getenv)
		if err != nil {
			return nil, err
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("model %q is listed twice; give each model its own id", m.ID)
		}
		seen[m.ID] = true
		if m.Default {
			defaults++
		}
		out = append(out, m)
	}
	if defaults > 1 {
		return nil, fmt.Errorf("%d models are marked default; mark one", defaults)
	}
	return out, nil
}

// config checks one entry and makes it a ModelConfig.
func (f modelFile) config(getenv func(string) string) (ModelConfig, error) {
	if !modelIDPattern.MatchString(f.ID) {
		return ModelConfig{}, fmt.Errorf("model id %q must be 1 to 64 letters, digits, '.', '_', ':' or '-'", f.ID)
	}
	m := ModelConfig{ID: f.ID, Label: strings.TrimSpace(f.Label), Provider: strings.ToLower(f.Provider), Name: f.Name,
		BaseURL: f.BaseURL, APIVersion: f.APIVersion, Images: f.Images, Documents: f.Documents, Default: f.Default}
	if m.Label == "" {
		m.Label = m.ID
	}
	switch m.Provider {
	case "demo":
		return m, nil
	case "openai", "azure", "anthropic", "mistral":
	default:
		return m, fmt.Errorf("model %q has unknown provider %q; use demo, openai, azure, anthropic or mistral", f.ID, f.Provider)
	}
	if f.Name == "" {
		return m, fmt.Errorf("model %q needs a name (the provider's model or deployment)", f.ID)
	}
	if f.APIKeyEnv != "" {
		if m.APIKey = getenv(f.APIKeyEnv); m.APIKey == "" {
			return m, fmt.Errorf("model %q takes its key from %s, which is not set", f.ID, f.APIKeyEnv)
		}
	}
	return m, nil
}

// modelInfos lists the models as GET /api/models shows them, the default
// marked.
func modelInfos(list []ModelConfig, defaultID string) toolmark.Models {
	out := make(toolmark.Models, len(list))
	for i, m := range list {
		out[i] = toolmark.ModelInfo{ID: m.ID, Label: m.Label, Provider: m.Provider, Images: m.Images, Documents: m.Documents,
			Default: m.ID == defaultID}
	}
	return out
}
