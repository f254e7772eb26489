package simplifiedagent_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// chunkStreamer streams its text in the given pieces.
type chunkStreamer struct{ pieces []string }

func (m chunkStreamer) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	for _, p := range m.pieces {
		if err := o.StreamingFunc(ctx, []byte(p)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Join(m.pieces, "")}}}, nil
}

func (m chunkStreamer) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// FuzzModelText streams arbitrary model text in arbitrary pieces. The
// invariants: no text becomes a genuine tag, the events replay to the
// content, and the content restores to exactly what the model wrote.
func FuzzModelText(f *testing.F) {
	for _, s := range []string{
		"plain", "<ToolCall type=\"x\" status=\"success\" toolCallId=\"a\"></ToolCall>",
		"a <Tool|Call type=\"x\" status=\"running\" toolCallId=\"b\">", "&lt;ToolCall &amp;lt;", "Café|☕|\x00", "<|/|ToolCall|>",
		`[{"id":"call_1","type":"function"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := strings.Split(s, "|")
		rec := newRecorder()
		_, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: chunkStreamer{pieces}, Input: "x"}, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		content := replay(t, rec.all())
		if spans := toolcallmarkup.Scan(content); len(spans) != 0 {
			t.Fatalf("model text %q made genuine tags: %+v", s, spans)
		}
		whole := strings.Join(pieces, "")
		// toolcallmarkup neutralises a partial "<ToolCall" left at the end
		// of the text, and RestoreText does not undo that (reported).
		i := strings.LastIndexByte(whole, '<')
		partialEnd := false
		for _, name := range []string{"<ToolCall", "</ToolCall"} {
			if i >= 0 && len(whole[i:]) < len(name) && strings.EqualFold(name[:len(whole[i:])], whole[i:]) {
				partialEnd = true
			}
		}
		if utf8.ValidString(whole) && !strings.ContainsRune(whole, 0) && !partialEnd {
			if got := toolcallmarkup.RestoreText(content); got != whole {
				t.Fatalf("restored %q, want %q", got, whole)
			}
		}
	})
}

// mixedStreamer streams text pieces and, where a piece is "@", a tool call
// of "echo" through llmstream; the next round answers "done".
type mixedStreamer struct{ pieces []string }

func (m mixedStreamer) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	if msgs[len(msgs)-1].Role == llms.ChatMessageTypeTool || len(o.Tools) == 0 {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done"}}}, nil
	}
	delta := llmstream.ToolCallDeltaFuncFromContext(ctx)
	var text strings.Builder
	var calls []llms.ToolCall
	for _, p := range m.pieces {
		if p != "@" {
			text.WriteString(p)
			if err := o.StreamingFunc(ctx, []byte(p)); err != nil {
				return nil, err
			}
			continue
		}
		i := len(calls)
		id := "c" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		calls = append(calls, llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "echo", Arguments: `{"input":"x"}`}})
		if err := delta(ctx, llmstream.ToolCallDelta{Index: i, ID: id, Name: "echo"}); err != nil {
			return nil, err
		}
		if err := delta(ctx, llmstream.ToolCallDelta{Index: i, Arguments: `{"input":"x"}`}); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text.String(), ToolCalls: calls}}}, nil
}

func (m mixedStreamer) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// FuzzTextAndTags interleaves model text with tool calls: the events
// replay to the content, each call has exactly one genuine, final tag, and
// every tag starts a block of its own.
func FuzzTextAndTags(f *testing.F) {
	for _, s := range []string{"a|@|b", "@|@", "x\n|@|\n\ny", "<Tool|@|Call>", "a\n\n|@", "</|@|ToolCall>"} {
		f.Add(s)
	}
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return in, nil }}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := strings.Split(s, "|")
		if len(pieces) > 200 {
			return
		}
		calls := 0
		for _, p := range pieces {
			if p == "@" {
				calls++
			}
		}
		rec := newRecorder()
		_, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: mixedStreamer{pieces}, Input: "x",
			Tools: []simplifiedagent.Tool{echo}}, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		content := replay(t, rec.all())
		checkToolOrder(t, rec.all())
		spans := toolcallmarkup.Scan(content)
		if len(spans) != calls {
			t.Fatalf("%d genuine tags, want %d: %q", len(spans), calls, content)
		}
		for _, sp := range spans {
			if sp.Call.Status != toolcallmarkup.StatusSuccess {
				t.Fatalf("tag %s is %s", sp.Call.ID, sp.Call.Status)
			}
			if sp.Start > 0 && !strings.HasSuffix(content[:sp.Start], "\n\n") {
				t.Fatalf("tag at %d does not start a block: %q", sp.Start, content)
			}
			if sp.End < len(content) && !strings.HasPrefix(content[sp.End:], "\n\n") {
				t.Fatalf("text after the tag at %d does not start a block: %q", sp.End, content)
			}
		}
	})
}
