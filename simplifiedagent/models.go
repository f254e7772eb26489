package simplifiedagent

import (
	"errors"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/toolmark/toolmark/simplifiedagent/openaiwire"
)

// NewOpenAI returns a model for an OpenAI-compatible chat-completions
// server (OpenAI, Ollama, vLLM, llama.cpp): baseURL such as
// "https://api.openai.com/v1" or "http://localhost:11434/v1" ("" means
// OpenAI), apiKey ("" for servers without one) and the model name. Its
// stream reports tool-call arguments apart from text (see package
// openaiwire).
func NewOpenAI(baseURL, apiKey, model string) (llms.Model, error) {
	return openaiwire.New(baseURL, apiKey, model)
}

// NewAnthropic returns a model for Anthropic's messages API through
// langchaingo's anthropic provider. baseURL may be "" for the default. Its
// text streams; its tool calls arrive whole at the end of each round.
func NewAnthropic(baseURL, apiKey, model string) (llms.Model, error) {
	if apiKey == "" {
		return nil, errors.New("anthropic: no API key")
	}
	opts := []anthropic.Option{anthropic.WithToken(apiKey)}
	if model != "" {
		opts = append(opts, anthropic.WithModel(model))
	}
	if baseURL != "" {
		opts = append(opts, anthropic.WithBaseURL(baseURL))
	}
	return anthropic.New(opts...)
}
