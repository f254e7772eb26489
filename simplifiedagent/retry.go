package simplifiedagent

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

// RetryPolicy is how the agent retries a model call that failed in a way
// waiting may cure — rate limited (HTTP 429), overloaded (529 or an
// overloaded error in the stream), the service failing (5xx) or
// unreachable (refused, reset, cut), a timeout — before it streamed
// anything: a call that already streamed text or a tool call is never
// made again, so nothing is shown twice. It is the one policy of every
// provider; the providers themselves make one request per call.
//
// The wait before attempt n+1 is the one the service asked for
// (Retry-After), or else BaseDelay·2ⁿ⁻¹ capped at MaxDelay, with jitter
// (a random half to the whole of it). The agent gives up after
// MaxAttempts attempts, or when the next wait would end more than MaxTotal
// after the first attempt began. Zero fields take the defaults.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, the first included [5]; 1 never retries
	MaxTotal    time.Duration // [60s]
	BaseDelay   time.Duration // [1s]
	MaxDelay    time.Duration // [20s]
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.MaxTotal <= 0 {
		p.MaxTotal = time.Minute
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 20 * time.Second
	}
	return p
}

// wait returns the pause before the attempt after attempt (1-based), given
// the wait the service asked for (0 for none).
func (p RetryPolicy) wait(attempt int, asked time.Duration) time.Duration {
	if asked > 0 {
		return asked
	}
	d := min(p.BaseDelay<<min(attempt-1, 30), p.MaxDelay)
	return d/2 + rand.N(d/2+1)
}

// generate makes one round's model call, retrying it as l.req.Retry says,
// and returns the reply: its text, the tool calls to run, its stop reason
// and reasoning. A failed call's error is a *modelerr.Error.
func (l *loop) generate(ctx context.Context, msgs []llms.MessageContent, offerTools bool, round int) (reply, error) {
	p := l.req.Retry.withDefaults()
	began := time.Now()
	for attempt := 1; ; attempt++ {
		rep, streamed, err := l.attempt(ctx, msgs, offerTools, round)
		if err == nil {
			l.s.usage(l, round, rep.usage)
			return rep, nil
		}
		if e := l.s.emitError(); e != nil {
			return rep, e // the events cannot be saved: not the model's fault
		}
		me := modelerr.Classify(err)
		if ctx.Err() != nil || streamed || !me.Retryable() || attempt >= p.MaxAttempts {
			return rep, me
		}
		wait := p.wait(attempt, me.RetryAfter)
		if time.Since(began)+wait > p.MaxTotal {
			return rep, me
		}
		l.s.modelRetry(l, toolmark.ModelRetryData{Round: round, Attempt: attempt, MaxAttempts: p.MaxAttempts,
			WaitMs: wait.Milliseconds(), Code: me.Code, Message: modelerr.RetryText(me.Code, wait)})
		l.log().Warn("model call failed; retrying", "round", round, "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return rep, modelerr.Classify(errors.Join(context.Cause(ctx), err))
		case <-t.C:
		}
	}
}

// usageOf reads the tokens of a response from the generation info its
// provider filled in: InputTokens and OutputTokens (Anthropic, the demo),
// or PromptTokens and CompletionTokens (OpenAI-compatible servers).
func usageOf(resp *llms.ContentResponse) (toolmark.Usage, bool) {
	var u toolmark.Usage
	found := false
	for _, ch := range resp.Choices {
		if ch == nil || ch.GenerationInfo == nil {
			continue
		}
		for _, k := range [][2]string{{"InputTokens", "OutputTokens"}, {"PromptTokens", "CompletionTokens"}} {
			in, ok1 := asInt(ch.GenerationInfo[k[0]])
			out, ok2 := asInt(ch.GenerationInfo[k[1]])
			if ok1 || ok2 {
				u.InputTokens, u.OutputTokens = max(u.InputTokens, in), max(u.OutputTokens, out)
				found = true
				break
			}
		}
	}
	return u, found
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}
