package tools

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolmark/toolmark"
)

// Error is a tool error as users see it. Error returns Msg: a short
// sentence, free of internal hosts, addresses and stack, that the agent
// writes into the tool's tag and event and hands to the model. Err is the
// whole cause; the tool logs it when it fails, and errors.Is and errors.As
// see it through Unwrap.
type Error struct {
	Msg string
	Err error
}

// Error returns the message users see.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// UserMessage returns the text of err that users may see: the message of
// the first *Error in its chain, else that of the first *toolmark.Error (a
// model error's sentence, for one), or, for any other error, its text with
// IP addresses and host:port pairs left out.
func UserMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	var te *toolmark.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return scrub(err.Error())
}

var (
	ipPortRE = regexp.MustCompile(`\[?[0-9a-fA-F:]*:[0-9a-fA-F:]+\]?:\d+|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`)
	spacesRE = regexp.MustCompile(`\s+`)
)

// scrub removes addresses from an error text and keeps it short.
func scrub(s string) string {
	s = ipPortRE.ReplaceAllString(s, "an internal address")
	s = strings.TrimSpace(spacesRE.ReplaceAllString(s, " "))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// failure logs the whole error of a failed tool call and returns it as an
// *Error with msg for users. A cancelled call is returned as it is.
func failure(log *slog.Logger, tool, msg string, err error, attrs ...any) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn("tool failed", append([]any{"tool", tool, "shown", msg, "err", err}, attrs...)...)
	return &Error{Msg: msg, Err: err}
}

// reachMessage words a failure to reach host (a web page's host, as the
// user wrote it) for users.
func reachMessage(host string, err error) string {
	var dns *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, ErrRefusedAddress):
		return host + " is a local or private address, which fetch_url does not visit"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return host + " did not answer in time"
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "could not find " + host
		}
		return "could not look up " + host
	case errors.Is(err, syscall.ECONNREFUSED):
		return host + " refused the connection"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection to " + host + " was reset"
	case errors.As(err, &tlsErr), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &recordErr):
		return "could not make a secure connection to " + host
	}
	return "could not reach " + host
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusMessage words an HTTP error answer of host.
func statusMessage(host string, code int) string {
	if text := http.StatusText(code); text != "" {
		return host + " answered HTTP " + strconv.Itoa(code) + " (" + text + ")"
	}
	return host + " answered HTTP " + strconv.Itoa(code)
}

// hostOf returns the host name of a URL as written, or "the page".
func hostOf(raw string) string {
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "the page"
}

// urlError is a URL fetch_url will not fetch; its text is for users.
type urlError struct{ msg string }

func (e *urlError) Error() string { return e.msg }

// statusError is an HTTP error answer.
type statusError struct {
	host string
	code int
}

func (e *statusError) Error() string { return e.host + " answered HTTP " + strconv.Itoa(e.code) }

// typeError is a page of a content type fetch_url cannot read.
type typeError struct{ contentType string }

func (e *typeError) Error() string { return "unsupported content type " + strconv.Quote(e.contentType) }

// errTooManyRedirects ends a chain of redirects.
var errTooManyRedirects = errors.New("too many redirects")

// fetchMessage words a failure of fetch_url for users.
func fetchMessage(raw string, err error) string {
	host := hostOf(raw)
	var redirected *url.Error
	if errors.As(err, &redirected) {
		if h := hostOf(redirected.URL); h != "the page" {
			host = h // the host the request was at when it failed
		}
	}
	var ue *urlError
	var se *statusError
	var te *typeError
	switch {
	case errors.As(err, &ue):
		return ue.msg
	case errors.As(err, &se):
		return statusMessage(host, se.code)
	case errors.As(err, &te):
		return host + " sent " + te.contentType + ", which fetch_url cannot read"
	case errors.Is(err, errTooManyRedirects):
		return host + " redirected too many times"
	}
	return reachMessage(host, err)
}
