package modelerr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

func TestFromHTTP(t *testing.T) {
	tests := []struct {
		status         int
		typ, code, msg string
		want           string
		retry          bool
	}{
		{429, "requests", "rate_limit_exceeded", "Rate limit reached", toolmark.ERATELIMITED, true},
		{429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota", toolmark.EQUOTA, false},
		{400, "invalid_request_error", "", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", toolmark.ECREDIT, false},
		{402, "", "", "Insufficient Balance", toolmark.ECREDIT, false},
		{529, "overloaded_error", "", "Overloaded", toolmark.EOVERLOADED, true},
		{503, "server_error", "", "The engine is currently overloaded", toolmark.EOVERLOADED, true},
		{500, "api_error", "", "Internal server error", toolmark.ESERVICEFAILED, true},
		{401, "authentication_error", "", "invalid x-api-key", toolmark.EAUTH, false},
		{403, "permission_error", "", "no access", toolmark.EAUTH, false},
		{400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens", toolmark.ECONTEXTTOOLONG, false},
		{400, "invalid_request_error", "", "prompt is too long: 210000 tokens > 200000 maximum", toolmark.ECONTEXTTOOLONG, false},
		{400, "exceed_context_size_error", "", "the request exceeds the available context size", toolmark.ECONTEXTTOOLONG, false},
		{404, "", "", `model "llama9" not found, try pulling it first`, toolmark.EBADREQUEST, false},
		{504, "", "", "Gateway Timeout", toolmark.ETIMEOUT, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status, " ", tt.typ), func(t *testing.T) {
			e := modelerr.FromHTTP(tt.status, tt.typ, tt.code, tt.msg, 0)
			if e.Code != tt.want || e.Retryable() != tt.retry {
				t.Errorf("code %s retryable %v, want %s %v", e.Code, e.Retryable(), tt.want, tt.retry)
			}
			if got := toolmark.ErrorMessage(e); got != toolmark.ModelErrorText(tt.want) || strings.Contains(got, tt.msg) {
				t.Errorf("people see %q, want %q", got, toolmark.ModelErrorText(tt.want))
			}
			if !strings.Contains(e.Error(), tt.msg) {
				t.Errorf("the log's text %q lacks the service's words", e.Error())
			}
		})
	}
}

func TestFromType(t *testing.T) {
	for typ, want := range map[string]string{
		"overloaded_error": toolmark.EOVERLOADED, "rate_limit_error": toolmark.ERATELIMITED,
		"api_error": toolmark.ESERVICEFAILED, "authentication_error": toolmark.EAUTH,
		"invalid_request_error": toolmark.EBADREQUEST, "server_error": toolmark.ESERVICEFAILED,
		"insufficient_quota": toolmark.EQUOTA,
	} {
		if got := modelerr.FromType(typ, "", "x").Code; got != want {
			t.Errorf("%s: %s, want %s", typ, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://10.1.2.3:8080/v1/chat/completions", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"refused", refused, toolmark.EUNAVAILABLE},
		{"reset", fmt.Errorf("reading: %w", syscall.ECONNRESET), toolmark.ESTREAMCUT},
		{"eof", io.ErrUnexpectedEOF, toolmark.ESTREAMCUT},
		{"deadline", context.DeadlineExceeded, toolmark.ETIMEOUT},
		{"cancelled", context.Canceled, toolmark.ECANCELLED},
		{"classified", fmt.Errorf("round 1: %w", modelerr.New(toolmark.EAUTH, errors.New("401"))), toolmark.EAUTH},
		{"unknown", errors.New("something odd"), toolmark.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := modelerr.Classify(tt.err)
			if e.Code != tt.want {
				t.Errorf("code %s, want %s", e.Code, tt.want)
			}
			if got := toolmark.ErrorMessage(e); strings.Contains(got, "10.1.2.3") || strings.Contains(got, "http") {
				t.Errorf("people see an address: %q", got)
			}
		})
	}
	if modelerr.Classify(nil) != nil {
		t.Error("Classify(nil) is not nil")
	}
	if e := modelerr.Classify(refused); strings.Contains(e.Error(), "10.1.2.3") {
		t.Errorf("the URL of a transport error stays out even of the log: %q", e.Error())
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	} {
		if got := modelerr.RetryAfter(tt.h, now); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.h, got, tt.want)
		}
	}
}

// TestSentences: the errors a person can meet each have their own code and
// sentence, and no sentence is another's.
func TestSentences(t *testing.T) {
	seen := map[string]string{}
	for _, code := range []string{toolmark.ERATELIMITED, toolmark.EOVERLOADED, toolmark.EAUTH, toolmark.EBADREQUEST,
		toolmark.EUNAVAILABLE, toolmark.ETIMEOUT, toolmark.ECONTEXTTOOLONG, toolmark.ECANCELLED, toolmark.ESERVICEFAILED,
		toolmark.ESTREAMCUT, toolmark.EQUOTA, toolmark.ECREDIT, toolmark.EBADRESPONSE, toolmark.ETOKENLIMIT, toolmark.EFILTERED, toolmark.EREFUSED} {
		s := toolmark.ModelErrorText(code)
		if other, dup := seen[s]; dup {
			t.Errorf("%s and %s share the sentence %q", code, other, s)
		}
		seen[s] = code
	}
}
