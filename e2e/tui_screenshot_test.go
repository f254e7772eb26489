package e2e

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUILightAndDark: without GLAMOUR_STYLE the full-screen client
// renders the answer in glamour's light style on a light terminal and in
// its dark style on a dark one (the terminal tells its background when
// asked). With TOOLMARK_README_SHOTS set to a directory, the two screens
// are written there as terminal-dark and terminal-light, .txt (the
// capture with its colours: cat it in a terminal) and .png.
func TestTUILightAndDark(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	// The colour of glamour's document text in each style.
	text := map[string]string{"dark": "38;5;252m", "light": "38;5;234m"}
	for _, tt := range []struct{ style, bg string }{{"dark", "#1e1e2e"}, {"light", "#fafafa"}} {
		tm := startTermWith(t, srv.URL, 100, 34, termOptions{env: []string{"GLAMOUR_STYLE="}, background: tt.bg})
		tm.waitText("offline demo model")
		tm.typeLine("Compare resuming with cancelling, and explain snapshots.")
		tm.waitText("Sources:")
		prev := ""
		tm.waitFor("a still screen", func(s string) bool {
			ok := s == prev && !spinnerRE.MatchString(s)
			prev = s
			if !ok {
				time.Sleep(100 * time.Millisecond)
			}
			return ok
		})
		capture := tm.screenANSI()
		other := "light"
		if tt.style == "light" {
			other = "dark"
		}
		if !strings.Contains(capture, text[tt.style]) || strings.Contains(capture, text[other]) {
			t.Errorf("on a %s background the answer is not in glamour's %s style:\n%q", tt.bg, tt.style, capture)
		}
		if dir := os.Getenv("TOOLMARK_README_SHOTS"); dir != "" {
			name := filepath.Join(dir, "terminal-"+tt.style)
			if err := os.WriteFile(name+".txt", []byte(capture), 0o644); err != nil {
				t.Fatal(err)
			}
			bg, fg := color.RGBA{0x1e, 0x1e, 0x2e, 0xff}, color.RGBA{0xcd, 0xd6, 0xf4, 0xff}
			if tt.style == "light" {
				bg, fg = color.RGBA{0xfa, 0xfa, 0xfa, 0xff}, color.RGBA{0x1c, 0x1c, 0x1c, 0xff}
			}
			writeTerminalPNG(t, capture, name+".png", bg, fg)
		}
	}
}

// writeTerminalPNG draws a pane captured with its colours (capture-pane
// -e) as a terminal with background bg and text colour fg shows it, in
// DejaVu Sans Mono, to path.
func writeTerminalPNG(t *testing.T, capture, path string, bg, fg color.Color) {
	t.Helper()
	const dir = "/usr/share/fonts/truetype/dejavu/"
	regular, err1 := loadFace(dir + "DejaVuSansMono.ttf")
	bold, err2 := loadFace(dir + "DejaVuSansMono-Bold.ttf")
	fallback, err3 := loadFace(dir + "DejaVuSans.ttf")
	if err1 != nil || err2 != nil || err3 != nil {
		t.Logf("no PNG: %v %v %v", err1, err2, err3)
		return
	}
	// Runs of empty rows are left out but one.
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(capture, "\n"), "\n") {
		if strings.TrimSpace(sgrRE.ReplaceAllString(l, "")) == "" && len(lines) > 0 && strings.TrimSpace(sgrRE.ReplaceAllString(lines[len(lines)-1], "")) == "" {
			continue
		}
		lines = append(lines, l)
	}
	cols := 0
	for _, l := range lines {
		cols = max(cols, utf8.RuneCountInString(sgrRE.ReplaceAllString(l, "")))
	}
	const cw, ch, pad = 9, 18, 12
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*pad, len(lines)*ch+2*pad))
	draw.Draw(img, img.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
	for y, line := range lines {
		st := cellStyle{}
		for x := 0; len(line) > 0; {
			if loc := sgrRE.FindStringSubmatchIndex(line); loc != nil && loc[0] == 0 {
				st.apply(line[loc[2]:loc[3]])
				line = line[loc[1]:]
				continue
			}
			r, size := utf8.DecodeRuneInString(line)
			line = line[size:]
			cfg, cbg := st.colors(fg, bg)
			px, py := pad+x*cw, pad+y*ch
			if cbg != nil {
				draw.Draw(img, image.Rect(px, py, px+cw, py+ch), &image.Uniform{cbg}, image.Point{}, draw.Src)
			}
			face := regular
			if st.bold {
				face = bold
			}
			if _, ok := face.GlyphAdvance(r); !ok {
				face = fallback
			}
			d := font.Drawer{Dst: img, Src: &image.Uniform{cfg}, Face: face, Dot: fixed.P(px, py+ch-5)}
			d.DrawString(string(r))
			x++
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
