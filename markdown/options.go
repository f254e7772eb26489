package markdown

import (
	"github.com/microcosm-cc/bluemonday"
	"github.com/toolmark/toolmark/statustext"
)

// Config holds the settings of the extension and of a Renderer. The zero
// value is not ready for use; NewConfig returns the defaults.
type Config struct {
	// StatusTexts maps a tool type to the function that words its widget.
	StatusTexts map[string]statustext.Func

	// DefaultStatusText words the widget of tool types missing from
	// StatusTexts.
	DefaultStatusText statustext.Func

	// Policy is the HTML policy of the final sanitising pass of a Renderer;
	// nil means DefaultPolicy. It must let the widget markup through.
	Policy *bluemonday.Policy

	// Highlight colours fenced code blocks whose language chroma knows,
	// with CSS classes (see HighlightStylesheet).
	Highlight bool
}

// NewConfig returns a Config holding the defaults: DefaultStatusTexts,
// statustext.Generic, a nil Policy (DefaultPolicy) and highlighting on.
func NewConfig() Config {
	return Config{
		StatusTexts:       statustext.Defaults(),
		DefaultStatusText: statustext.Generic,
		Highlight:         true,
	}
}

// WithHighlighting turns the highlighting of fenced code blocks on or off.
func WithHighlighting(on bool) Option {
	return func(c *Config) {
		c.Highlight = on
	}
}

// Option changes a Config.
type Option func(*Config)

// WithStatusText sets the status text of the tool type toolType. A nil f
// restores the generic text for that type.
func WithStatusText(toolType string, f statustext.Func) Option {
	return func(c *Config) {
		if f == nil {
			delete(c.StatusTexts, toolType)
			return
		}
		c.StatusTexts[toolType] = f
	}
}

// WithDefaultStatusText sets the status text of tool types that have none of
// their own. A nil f restores statustext.Generic.
func WithDefaultStatusText(f statustext.Func) Option {
	return func(c *Config) {
		if f == nil {
			f = statustext.Generic
		}
		c.DefaultStatusText = f
	}
}

// WithPolicy sets the HTML policy of a Renderer's final sanitising pass; the
// policy must not be changed afterwards. A nil p restores DefaultPolicy.
func WithPolicy(p *bluemonday.Policy) Option {
	return func(c *Config) {
		c.Policy = p
	}
}

func newConfig(opts []Option) Config {
	c := NewConfig()
	for _, o := range opts {
		o(&c)
	}
	return c
}
