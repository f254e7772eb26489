package simplifiedagent

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/claude"
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

// DefaultAzureAPIVersion is the Azure OpenAI API version NewAzureOpenAI
// asks for when none is given.
const DefaultAzureAPIVersion = "2024-10-21"

// NewAzureOpenAI returns a model for a deployment of Azure OpenAI:
// endpoint such as "https://my-resource.openai.azure.com", the resource's
// API key (sent as api-key), the deployment's name and the API version
// ("" for DefaultAzureAPIVersion). It speaks the chat-completions format
// of package openaiwire.
func NewAzureOpenAI(endpoint, apiKey, deployment, apiVersion string) (llms.Model, error) {
	if endpoint == "" || deployment == "" {
		return nil, errors.New("azure openai: the endpoint and the deployment are needed")
	}
	if apiVersion == "" {
		apiVersion = DefaultAzureAPIVersion
	}
	m, err := openaiwire.New(strings.TrimRight(endpoint, "/"), "", deployment)
	if err != nil {
		return nil, err
	}
	m.URL = m.BaseURL + "/openai/deployments/" + url.PathEscape(deployment) + "/chat/completions?api-version=" + url.QueryEscape(apiVersion)
	m.Header = http.Header{"Api-Key": {apiKey}}
	return m, nil
}

// NewAnthropic returns a model for Anthropic's messages API over the
// official Go SDK (package claude): every part of an assistant message
// (its text and all its tool calls) goes back to the API, text and tool
// input stream. baseURL may be "" for Anthropic's own address.
func NewAnthropic(baseURL, apiKey, model string) (llms.Model, error) {
	return claude.New(claude.Config{BaseURL: baseURL, APIKey: apiKey, Model: model})
}

// NewMistral returns a model for Mistral's API (baseURL "" for
// https://api.mistral.ai/v1): the chat-completions format of package
// openaiwire without stream_options, which Mistral refuses (its streams
// report the usage without being asked). Magistral's thinking parts are
// read as reasoning.
func NewMistral(baseURL, apiKey, model string) (llms.Model, error) {
	if baseURL == "" {
		baseURL = "https://api.mistral.ai/v1"
	}
	m, err := openaiwire.New(baseURL, apiKey, model)
	if err != nil {
		return nil, err
	}
	m.NoStreamOptions = true
	return m, nil
}
