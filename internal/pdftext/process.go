package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Command reads PDFs in a child process, the program and arguments that
// run Serve (toolmark's own executable with "pdftext"), so that nothing a
// PDF does to the library — a loop that never returns, a stack or a heap
// that grows without end — reaches the server: the child is killed at the
// timeout and lives under a memory limit. An empty Command reads in this
// process (Text).
type Command []string

// Text returns what Text returns for data, read by the command.
func (c Command) Text(ctx context.Context, data []byte, lim Limits) (string, error) {
	if len(c) == 0 {
		return Text(data, lim)
	}
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return "", ErrTooLarge
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout+2*time.Second)
	defer cancel()
	args := append(c[1:len(c):len(c)], strconv.Itoa(lim.MaxBytes), strconv.Itoa(lim.MaxPages), strconv.Itoa(lim.MaxText), lim.Timeout.String())
	cmd := exec.CommandContext(ctx, c[0], args...)
	cmd.Stdin = bytes.NewReader(data)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Env = []string{"GOMAXPROCS=1"}
	cmd.WaitDelay = time.Second // a grandchild holding stdout does not hold Wait
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", ErrTooSlow
	case err != nil:
		return "", ErrDamaged // the child died: out of memory or stack
	}
	code, text, _ := strings.Cut(out.String(), "\n")
	if e, ok := errorCodes[code]; ok {
		return "", e
	}
	if code != "ok" || len(text) > lim.MaxText {
		return "", ErrDamaged
	}
	return text, nil
}

// errorCodes name Text's errors between the processes.
var errorCodes = map[string]error{
	"encrypted": ErrEncrypted, "damaged": ErrDamaged, "notext": ErrNoText, "slow": ErrTooSlow, "large": ErrTooLarge,
}

// Serve is the child of Command: it reads a PDF from r with the limits
// args give (max bytes, pages, text and the timeout, as Command passes
// them) and writes to w a line "ok" and the text, or a line naming the
// error. It caps its own stack and address space first.
func Serve(args []string, r io.Reader, w io.Writer) error {
	if len(args) != 4 {
		return errors.New("usage: toolmark pdftext MAXBYTES MAXPAGES MAXTEXT TIMEOUT < file.pdf")
	}
	var lim Limits
	var err error
	var errs []error
	lim.MaxBytes, err = strconv.Atoi(args[0])
	errs = append(errs, err)
	lim.MaxPages, err = strconv.Atoi(args[1])
	errs = append(errs, err)
	lim.MaxText, err = strconv.Atoi(args[2])
	errs = append(errs, err)
	lim.Timeout, err = time.ParseDuration(args[3])
	if err = errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("pdftext: %w", err)
	}
	lim = lim.withDefaults()
	debug.SetMaxStack(64 << 20)
	limitMemory(int64(lim.MaxBytes)*8 + 512<<20)
	data, err := io.ReadAll(io.LimitReader(r, int64(lim.MaxBytes)+1))
	if err != nil {
		return fmt.Errorf("pdftext: reading the PDF: %w", err)
	}
	text, err := Text(data, lim)
	bw := bufio.NewWriter(w)
	if err != nil {
		for code, e := range errorCodes {
			if e == err {
				fmt.Fprintln(bw, code)
			}
		}
	} else {
		fmt.Fprint(bw, "ok\n", text)
	}
	return bw.Flush()
}
