package tui

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// errText is an error as the screen shows it: one short sentence. The
// server's errors are short sentences already; a network failure is said
// in words, without the addresses and Go types of its text.
func errText(err error) string {
	var apiErr *client.APIError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrTurnFailed), errors.Is(err, ErrTurnCancelled):
		return SanitizeLine(err.Error())
	case client.ErrorCode(err) == toolmark.EUNAUTHORIZED:
		return "The server refused the token: check --token (or TOOLMARK_TOKEN)."
	case errors.As(err, &apiErr):
		return SanitizeLine(apiErr.Message)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "The server cannot be reached: is it running?"
	case errors.As(err, &dns):
		return "The server's name cannot be resolved: check --server."
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "The server did not answer in time."
	case errors.Is(err, syscall.ECONNRESET), errors.As(err, &ne):
		return "The connection to the server was lost."
	}
	var te *toolmark.Error
	if errors.As(err, &te) {
		return SanitizeLine(te.Message)
	}
	return "Something went wrong talking to the server."
}
