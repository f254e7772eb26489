// Package modelerr classifies the errors of model services into toolmark's
// taxonomy of model errors (toolmark.ERATELIMITED, EOVERLOADED, EAUTH,
// EBADREQUEST, EUNAVAILABLE, ESERVICEFAILED, ESTREAMCUT, EQUOTA,
// EBADRESPONSE, ETIMEOUT, ECONTEXTTOOLONG, ECANCELLED): a code,
// whether trying again may help, and how long the service asked to wait.
//
// Providers build an *Error where they know the service's own answer
// (FromHTTP, FromType); Classify does the rest (transport failures, cut
// streams, cancellation). Error returns the whole cause, for the log;
// toolmark.ErrorMessage of an *Error is the short sentence people see
// (toolmark.ModelErrorText), which names no URL, host or service text.
package modelerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolmark/toolmark"
)

// Error is a classified model error.
type Error struct {
	Code       string        // one of toolmark's model error codes
	Status     int           // the HTTP status of the answer, 0 for none (transport, in-stream)
	RetryAfter time.Duration // the wait the service asked for (Retry-After), 0 for none
	Err        error         // the cause, with the service's own words: for the log only
}

// Error returns the code and the whole cause, for the log.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("model service: ")
	b.WriteString(e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause and the *toolmark.Error people see, so that
// errors.Is sees the cause and toolmark.ErrorCode and ErrorMessage the
// code and its sentence.
func (e *Error) Unwrap() []error {
	return []error{e.Err, &toolmark.Error{Code: e.Code, Message: toolmark.ModelErrorText(e.Code)}}
}

// Retryable reports whether trying the same request again may succeed:
// rate limits, overload, a service that failed or could not be reached,
// and timeouts. The caller decides whether it still may (nothing streamed
// yet, attempts and time left).
func (e *Error) Retryable() bool {
	switch e.Code {
	case toolmark.ERATELIMITED, toolmark.EOVERLOADED, toolmark.EUNAVAILABLE, toolmark.ETIMEOUT,
		toolmark.ESERVICEFAILED, toolmark.ESTREAMCUT:
		return true
	}
	return false
}

// New returns an *Error of code with cause err.
func New(code string, err error) *Error { return &Error{Code: code, Err: err} }

// FromHTTP classifies an error answer of a model service: its HTTP status,
// and the error type, code and message of its body where the service gives
// them (OpenAI's {"error":{"type","code","message"}}, Anthropic's
// {"error":{"type","message"}}). retryAfter is the wait the answer asked
// for (RetryAfter of its header), 0 for none.
func FromHTTP(status int, typ, code, msg string, retryAfter time.Duration) *Error {
	cause := fmt.Errorf("HTTP %d %s", status, strings.TrimSpace(strings.Join(nonEmpty(typ, code, msg), ": ")))
	e := &Error{Status: status, RetryAfter: retryAfter, Err: cause}
	switch {
	case tooLong(typ, code, msg):
		e.Code = toolmark.ECONTEXTTOOLONG
	case status == http.StatusPaymentRequired || credit(typ, code, msg):
		e.Code = toolmark.ECREDIT
	case quota(typ, code, msg):
		e.Code = toolmark.EQUOTA
	case status == http.StatusTooManyRequests:
		e.Code = toolmark.ERATELIMITED
	case status == 529 || isOverloaded(typ, msg):
		e.Code = toolmark.EOVERLOADED
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code = toolmark.EAUTH
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Code = toolmark.ETIMEOUT
	case status == http.StatusRequestEntityTooLarge:
		e.Code = toolmark.ECONTEXTTOOLONG
	case status >= 500:
		e.Code = toolmark.ESERVICEFAILED
	case status >= 400:
		e.Code = toolmark.EBADREQUEST
	default:
		e.Code = toolmark.ESERVICEFAILED
	}
	return e
}

// FromType classifies an error a service sent inside its stream, by the
// error's type (Anthropic's overloaded_error, rate_limit_error, api_error,
// …; OpenAI's server_error, …) and message.
func FromType(typ, code, msg string) *Error {
	cause := fmt.Errorf("error in stream: %s", strings.Join(nonEmpty(typ, code, msg), ": "))
	e := &Error{Err: cause}
	t := strings.ToLower(typ + " " + code)
	switch {
	case tooLong(typ, code, msg):
		e.Code = toolmark.ECONTEXTTOOLONG
	case credit(typ, code, msg):
		e.Code = toolmark.ECREDIT
	case quota(typ, code, msg):
		e.Code = toolmark.EQUOTA
	case isOverloaded(typ, msg):
		e.Code = toolmark.EOVERLOADED
	case strings.Contains(t, "rate_limit") || strings.Contains(t, "rate limit"):
		e.Code = toolmark.ERATELIMITED
	case strings.Contains(t, "authentication") || strings.Contains(t, "permission"):
		e.Code = toolmark.EAUTH
	case strings.Contains(t, "invalid_request") || strings.Contains(t, "not_found"):
		e.Code = toolmark.EBADREQUEST
	case strings.Contains(t, "timeout"):
		e.Code = toolmark.ETIMEOUT
	default: // server_error, api_error and the unknown: the service failed
		e.Code = toolmark.ESERVICEFAILED
	}
	return e
}

// Classify returns err as an *Error: the one in its chain, or a new one for
// a transport failure (refused connection, unknown host: unavailable; a
// connection reset or ended mid-answer: stream_cut), a timeout, or a
// cancellation. Any other error is unavailable. nil stays nil.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = fmt.Errorf("%s: %w", ue.Op, ue.Err) // the URL stays out, even of the log's cause
	}
	code := toolmark.EUNAVAILABLE
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		code = toolmark.ECANCELLED
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		code = toolmark.ETIMEOUT
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		code = toolmark.ESTREAMCUT
	}
	return &Error{Code: code, Err: err}
}

// RetryAfter returns the wait an answer's header asks for: retry-after-ms
// (milliseconds, sent by OpenAI and Anthropic), or Retry-After in seconds or
// as an HTTP date; 0 when there is none.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

func isOverloaded(typ, msg string) bool {
	return strings.Contains(strings.ToLower(typ), "overloaded") || strings.Contains(strings.ToLower(msg), "overloaded")
}

// tooLong reports whether an error says the prompt is longer than the
// model's context, in the words of OpenAI (context_length_exceeded,
// "maximum context length"), Anthropic ("prompt is too long"), vLLM,
// llama.cpp ("exceeds the available context size") and Ollama.
func tooLong(typ, code, msg string) bool {
	s := strings.ToLower(typ + " " + code + " " + msg)
	for _, k := range []string{"context_length_exceeded", "maximum context length", "prompt is too long",
		"context size", "context window", "too many tokens", "exceed_context_size"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// quota reports whether an error says the account's quota is used up,
// which waiting does not cure: OpenAI's insufficient_quota (a 429).
func quota(typ, code, msg string) bool {
	return has(typ+" "+code+" "+msg, "insufficient_quota", "exceeded your current quota", "billing_hard_limit")
}

// credit reports whether an error says the account's credit balance is too
// low: Anthropic's "Your credit balance is too low" (a 400), DeepSeek's
// "Insufficient Balance" (a 402).
func credit(typ, code, msg string) bool {
	return has(typ+" "+code+" "+msg, "credit balance", "insufficient_balance", "insufficient balance")
}

// has reports whether s holds one of keys, in any letter case.
func has(s string, keys ...string) bool {
	s = strings.ToLower(s)
	for _, k := range keys {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

func nonEmpty(s ...string) []string {
	out := s[:0:0]
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// RetryText returns the line shown while a model call waits to be tried again
// after an error of the given code (a toolmark model error code): "Rate
// limited — retrying in 3 s".
func RetryText(code string, wait time.Duration) string {
	what := "The model service failed"
	switch code {
	case toolmark.ERATELIMITED:
		what = "Rate limited"
	case toolmark.EOVERLOADED:
		what = "The model service is overloaded"
	case toolmark.ETIMEOUT:
		what = "The model service did not answer in time"
	case toolmark.EUNAVAILABLE:
		what = "The model service could not be reached"
	case toolmark.ESTREAMCUT:
		what = "The model's answer was cut off"
	}
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		return what + " — retrying now"
	}
	return what + " — retrying in " + strconv.Itoa(secs) + " s"
}
