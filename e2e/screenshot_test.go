package e2e

import (
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
)

// saveScreenshot renders a tmux pane captured with its colours
// (capture-pane -e: text and SGR sequences) to docs/images/name as a PNG,
// on a dark background, as a terminal shows it.
func saveScreenshot(t *testing.T, capture, name string) {
	t.Helper()
	out := filepath.Join(repoRoot(t), "docs", "images", name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTerminalPNG(t, capture, out, color.RGBA{0x1e, 0x1e, 0x2e, 0xff}, color.RGBA{0xcd, 0xd6, 0xf4, 0xff})
}

var sgrRE = regexp.MustCompile("\x1b\\[([0-9;:]*)m")

func loadFace(path string) (font.Face, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := opentype.Parse(b)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: 11.5, DPI: 96, Hinting: font.HintingFull})
}

// cellStyle is the SGR state of a cell.
type cellStyle struct {
	fg, bg      color.Color
	bold, faint bool
	reverse     bool
}

func (s *cellStyle) apply(params string) {
	ps := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	if len(ps) == 0 {
		*s = cellStyle{}
	}
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case n == 0:
			*s = cellStyle{}
		case n == 1:
			s.bold = true
		case n == 2:
			s.faint = true
		case n == 7:
			s.reverse = true
		case n == 22:
			s.bold, s.faint = false, false
		case n == 27:
			s.reverse = false
		case n >= 30 && n <= 37:
			s.fg = palette(n - 30)
		case n >= 90 && n <= 97:
			s.fg = palette(n - 90 + 8)
		case n == 39:
			s.fg = nil
		case n >= 40 && n <= 47:
			s.bg = palette(n - 40)
		case n >= 100 && n <= 107:
			s.bg = palette(n - 100 + 8)
		case n == 49:
			s.bg = nil
		case (n == 38 || n == 48) && i+1 < len(ps):
			var c color.Color
			if ps[i+1] == "5" && i+2 < len(ps) {
				k, _ := strconv.Atoi(ps[i+2])
				c, i = palette(k), i+2
			} else if ps[i+1] == "2" && i+4 < len(ps) {
				r, _ := strconv.Atoi(ps[i+2])
				g, _ := strconv.Atoi(ps[i+3])
				b, _ := strconv.Atoi(ps[i+4])
				c, i = color.RGBA{uint8(r), uint8(g), uint8(b), 0xff}, i+4
			}
			if n == 38 {
				s.fg = c
			} else {
				s.bg = c
			}
		}
	}
}

// colors are the cell's text and background colours on a terminal whose
// own are defFg and defBg (bg is nil where the terminal's shows).
func (s cellStyle) colors(defFg, defBg color.Color) (fg, bg color.Color) {
	fg, bg = s.fg, s.bg
	if fg == nil {
		fg = defFg
	}
	if s.faint {
		r, g, b, _ := fg.RGBA()
		fg = color.RGBA{uint8(r >> 9), uint8(g >> 9), uint8(b >> 9), 0xff}
	}
	if s.reverse {
		if bg == nil {
			bg = defBg
		}
		fg, bg = bg, fg
	}
	return fg, bg
}

// palette is the xterm 256-colour palette.
func palette(n int) color.Color {
	base := []color.RGBA{
		{0x45, 0x47, 0x5a, 0xff}, {0xf3, 0x8b, 0xa8, 0xff}, {0xa6, 0xe3, 0xa1, 0xff}, {0xf9, 0xe2, 0xaf, 0xff},
		{0x89, 0xb4, 0xfa, 0xff}, {0xf5, 0xc2, 0xe7, 0xff}, {0x94, 0xe2, 0xd5, 0xff}, {0xba, 0xc2, 0xde, 0xff},
		{0x7f, 0x84, 0x9c, 0xff}, {0xf3, 0x8b, 0xa8, 0xff}, {0xa6, 0xe3, 0xa1, 0xff}, {0xf9, 0xe2, 0xaf, 0xff},
		{0x89, 0xb4, 0xfa, 0xff}, {0xf5, 0xc2, 0xe7, 0xff}, {0x94, 0xe2, 0xd5, 0xff}, {0xa6, 0xad, 0xc8, 0xff},
	}
	switch {
	case n < 16:
		return base[max(n, 0)]
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + v*40)
		}
		return color.RGBA{level(n / 36), level(n / 6 % 6), level(n % 6), 0xff}
	case n < 256:
		v := uint8(8 + (n-232)*10)
		return color.RGBA{v, v, v, 0xff}
	}
	return base[7]
}
