package tui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// Errors a turn ends with when it did not complete; errors.Is tells them
// apart from the client's own errors.
var (
	ErrTurnFailed    = errors.New("the answer failed")
	ErrTurnCancelled = errors.New("the answer was cancelled")
)

// startTurn posts text as a turn of conversation convID, creating the
// conversation first when convID is empty. A POST that fails on the
// network is retried with the same Idempotency-Key, so it cannot start two
// turns.
func startTurn(ctx context.Context, c *client.Client, convID string, in toolmark.TurnInput) (conv string, ti client.TurnInfo, err error) {
	if convID == "" {
		cv, err := c.CreateConversation(ctx, "") // the server titles it from the first question
		if err != nil {
			return "", ti, fmt.Errorf("creating a conversation: %w", err)
		}
		convID = cv.ID
	}
	key := newIdempotencyKey()
	for attempt := 0; attempt < 3; attempt++ {
		ti, err = c.PostTurnInput(ctx, convID, in, key)
		var apiErr *client.APIError
		if err == nil || errors.As(err, &apiErr) || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if err != nil {
		if client.ErrorCode(err) == toolmark.ECONFLICT {
			return convID, ti, fmt.Errorf("an answer is still being written in this conversation: %w", err)
		}
		return convID, ti, fmt.Errorf("sending the message: %w", err)
	}
	return convID, ti, nil
}

// endError is the error a finished turn stands for: nil when it completed.
func endError(end toolmark.TurnEndData) error {
	switch end.Status {
	case toolmark.TurnCompleted:
		return nil
	case toolmark.TurnCancelled:
		return ErrTurnCancelled
	}
	msg := SanitizeLine(end.Error)
	if msg == "" {
		msg = string(end.Status)
	}
	return fmt.Errorf("%w: %s", ErrTurnFailed, msg)
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
