package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ErrRefusedAddress means fetch_url refused to connect to an address of the
// local machine or network (SSRF protection).
var ErrRefusedAddress = errors.New("refused address")

// FetchURL is the fetch_url tool: it fetches a web page and returns its
// readable text.
//
// It refuses loopback, private, link-local (which holds the cloud metadata
// address 169.254.169.254), CGNAT, unspecified, multicast and other special
// addresses unless Allow holds them. The check runs when a connection is
// dialled, after DNS and on every redirect, so neither DNS rebinding nor a
// redirect gets around it. Proxies from the environment are not used.
type FetchURL struct {
	Allow        []netip.Prefix // addresses allowed in spite of the policy
	MaxBytes     int64          // body bytes read; default 2 MiB
	MaxChars     int            // text returned; default 12000 bytes
	Timeout      time.Duration  // whole request; default 20 s
	MaxRedirects int            // default 5
	Logger       *slog.Logger   // where failures are logged in full; default slog.Default()
}

// NewFetchURL returns the fetch_url tool with the default limits; allow
// lists prefixes exempt from the address policy (for tests and intranets).
func NewFetchURL(allow ...netip.Prefix) *FetchURL {
	return &FetchURL{Allow: allow}
}

// Name implements tools.Tool.
func (*FetchURL) Name() string { return "fetch_url" }

// Description implements tools.Tool.
func (*FetchURL) Description() string {
	return "Fetch a public web page (http or https) and return its title and readable text."
}

// Parameters returns the JSON schema of the arguments.
func (*FetchURL) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"url": map[string]any{"type": "string", "description": "the http or https URL"},
		},
		"required": []string{"url"},
	}
}

// TagAttrs shows the URL on the tag.
func (*FetchURL) TagAttrs(args map[string]any) []toolcallmarkup.Attr {
	if u := stringArg(args, "url"); u != "" {
		return []toolcallmarkup.Attr{{Key: "url", Value: u}}
	}
	return nil
}

// Call implements tools.Tool. input is {"url": "..."} or a plain URL.
func (t *FetchURL) Call(ctx context.Context, input string) (string, error) {
	var args struct {
		URL string `json:"url"`
	}
	if err := decodeArgs(input, &args, &args.URL); err != nil {
		return "", fmt.Errorf("fetch_url: bad arguments: %w", err)
	}
	raw := strings.TrimSpace(args.URL)
	text, err := t.Fetch(ctx, raw)
	if err != nil {
		return "", failure(t.Logger, t.Name(), fetchMessage(raw, err), err, "url", raw)
	}
	return text, nil
}

// Fetch returns the title and readable text of the page at rawURL.
func (t *FetchURL) Fetch(ctx context.Context, rawURL string) (string, error) {
	u, err := t.checkURL(rawURL)
	if err != nil {
		return "", err
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "toolmark-fetch/1 (+https://github.com/toolmark/toolmark)")
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, */*;q=0.1")
	resp, err := t.client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", &statusError{host: u.Host, code: resp.StatusCode}
	}
	maxBytes := t.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 2 << 20
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", u.Host, err)
	}
	cut := int64(len(body)) > maxBytes
	if cut {
		body = body[:maxBytes]
	}
	rawCT := resp.Header.Get("Content-Type")
	ct, _, _ := mime.ParseMediaType(rawCT)
	var title, text string
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml" || ct == "":
		title, text = Readable(toUTF8(body, rawCT))
	case strings.HasPrefix(ct, "text/") || ct == "application/json":
		text = strings.ToValidUTF8(toUTF8(body, rawCT), "\uFFFD")
	default:
		return "", &typeError{contentType: ct}
	}
	maxChars := t.MaxChars
	if maxChars <= 0 {
		maxChars = 12000
	}
	if len(text) > maxChars {
		n := maxChars
		for n > 0 && text[n]&0xC0 == 0x80 {
			n--
		}
		text, cut = text[:n], true
	}
	if cut {
		text += "\n[truncated]"
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	fmt.Fprintf(&b, "URL: %s\n\n%s", resp.Request.URL, text)
	return b.String(), nil
}

// toUTF8 decodes body by the charset of its Content-Type or, for HTML, its
// meta tag; UTF-8 when neither says otherwise.
func toUTF8(body []byte, contentType string) string {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || enc == nil {
		return string(body)
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return string(body)
	}
	return string(out)
}

// checkURL accepts http and https URLs whose host is a name or a canonical
// IP address. Numeric hosts in other forms (2130706433, 0177.0.0.1,
// 0x7f.1) are refused: resolvers disagree on them.
func (t *FetchURL) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &urlError{msg: "that is not a valid URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &urlError{msg: "only http and https URLs can be fetched"}
	}
	host := u.Hostname()
	if host == "" {
		return nil, &urlError{msg: "the URL has no host"}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !t.allowed(ip) {
			return nil, fmt.Errorf("%w: %s", ErrRefusedAddress, ip)
		}
		return u, nil
	}
	if legacyIPv4(host) {
		return nil, fmt.Errorf("%w: numeric host %q", ErrRefusedAddress, host)
	}
	return u, nil
}

// legacyIPv4 reports whether host looks like an inet_aton number: one to
// four dot-separated decimal, octal or hex parts.
func legacyIPv4(host string) bool {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		if _, err := strconv.ParseUint(p, 0, 32); err != nil {
			return false
		}
	}
	return true
}

func (t *FetchURL) client() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: t.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	maxRedirects := t.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = 5
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("%w: more than %d", errTooManyRedirects, maxRedirects)
			}
			_, err := t.checkURL(req.URL.String())
			return err
		},
	}
}

// control refuses a connection to a forbidden address; it runs for every
// dialled address, after name resolution.
func (t *FetchURL) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !t.allowed(ip) {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, host)
	}
	return nil
}

func (t *FetchURL) allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range t.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return PublicAddr(ip)
}

var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (embeds IPv4)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("2001::/32"),       // Teredo
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 (embeds IPv4)
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// PublicAddr reports whether ip is a public unicast address that fetch_url
// may connect to by default.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() {
		return false
	}
	for _, p := range specialPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Readable returns the title and the readable text of an HTML page:
// scripts, styles and other non-content elements dropped, blocks on lines of
// their own, whitespace collapsed.
func Readable(page string) (title, text string) {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	skip := 0
	inTitle := false
	pendingSpace := false
	nl := 0       // newlines at the end of b
	var last byte // last byte written
	write := func(s string) {
		b.WriteString(s)
		last = s[len(s)-1]
		if last == '\n' {
			nl++
		} else {
			nl = 0
		}
	}
	newline := func(n int) {
		if b.Len() == 0 {
			return
		}
		for ; nl < n; nl++ {
			b.WriteByte('\n')
			last = '\n'
		}
		pendingSpace = false
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimSpace(title), strings.TrimSpace(b.String())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head", "nav", "footer", "form", "button", "select":
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				if tag == "head" && tt == html.EndTagToken {
					skip = 0
				}
				continue
			case "title":
				inTitle = tt == html.StartTagToken
				continue
			case "br":
				newline(1)
			case "p", "div", "section", "article", "main", "header", "h1", "h2", "h3", "h4", "h5", "h6",
				"ul", "ol", "table", "blockquote", "pre", "hr", "figure", "dl":
				newline(2)
			case "li", "tr", "dt", "dd":
				newline(1)
				if tag == "li" && tt == html.StartTagToken {
					write("- ")
				}
			case "td", "th":
				pendingSpace = true
			}
		case html.TextToken:
			raw := string(z.Text())
			if inTitle {
				title += raw
				continue
			}
			if skip > 0 {
				continue
			}
			fields := strings.Fields(raw)
			if len(fields) == 0 {
				if raw != "" {
					pendingSpace = true
				}
				continue
			}
			startsSpace := raw[0] == ' ' || raw[0] == '\n' || raw[0] == '\t' || raw[0] == '\r'
			if (pendingSpace || startsSpace) && b.Len() > 0 && last != '\n' && last != ' ' {
				write(" ")
			}
			write(strings.Join(fields, " "))
			last := raw[len(raw)-1]
			pendingSpace = last == ' ' || last == '\n' || last == '\t' || last == '\r'
		}
	}
}
