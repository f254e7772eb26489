package toolmark

// HistoryTurn is one finished turn of a conversation as an agent needs it
// to rebuild the model's message history: the store reads it, the agent
// turns it into model messages.
type HistoryTurn struct {
	TurnID           string
	Status           TurnStatus
	UserText         string
	AssistantContent string           // ToolCall markup, final statuses only
	ToolCalls        []ToolCallRecord // the turn's tool-call records
	// Reasoning is the model's reasoning items of the turn (Reasoning.Parts
	// of its answer), which some APIs want back with the turn's calls.
	Reasoning []ReasoningPart
	// Attachments is the files of the turn's question, in order, with
	// what of them goes to the model (Data, or a PDF's Text; neither for
	// a file left out).
	Attachments []Upload
}

// Resume is an answer begun on another replica (one that handed its turns
// over while it drained), as its events left it: the agent that takes the
// turn continues it.
type Resume struct {
	Content   string           // the answer's ToolCall markup so far
	ToolCalls []ToolCallRecord // its tool calls; the finished ones go back to the model
	Todos     []Todo           // its task list
	Reasoning []ReasoningPart  // its reasoning items, which go back with its calls
}
