package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// hostileReq is one hostile request and what the API documents for it.
type hostileReq struct {
	name         string
	method, path string
	body         []byte
	contentType  string // "" sends application/json with a body; "none" sends none
	chunked      bool   // send the body without a length
	headers      []string
	token        string
	want         int  // the documented status; 0 when only "no 5xx" is known
	foreign      bool // another user's id: must be 404, as an unknown id
	null         bool // a null body: must be 400
}

// hostile sends malformed, null, oversized and invalid UTF-8 requests,
// unknown ids and another user's ids to a replica in token mode, then
// random bodies up to the configured count. No answer may be a 5xx or a
// dropped connection; every foreign id must be 404, every null body 400,
// and every other request with a documented status must get it.
func (s *suite) hostile(ctx context.Context) error {
	const sc = "hostile"
	cfg := s.cfg
	rep, err := s.cl.start(ctx, "hostile", serve{pace: 25 * time.Millisecond, grace: quickStop})
	if err != nil {
		return err
	}
	alice, err := s.user(ctx, "alice")
	if err != nil {
		return err
	}
	bob, err := s.user(ctx, "bob")
	if err != nil {
		return err
	}
	own := func(u user) (conv, turn string, err error) {
		if conv, turn, err = u.startTurn(ctx, rep.URL, "How does resume work?"); err != nil {
			return
		}
		_, err = s.waitFinal(ctx, []string{turn}, time.Now().Add(30*time.Second))
		return
	}
	aConv, aTurn, err := own(alice)
	if err != nil {
		return err
	}
	bConv, bTurn, err := own(bob)
	if err != nil {
		return err
	}
	reqs := hostileCatalogue(alice.token, bob.token, aConv, aTurn, bConv, bTurn)
	for len(reqs) < cfg.Hostile {
		reqs = append(reqs, s.randomBodyRequest(alice.token, aConv))
	}

	var fivexx, dropped, mismatched, foreign, foreignBad, nulls, nullBad int
	var fivexxEx, droppedEx, mismatchEx, foreignEx, nullEx []string
	for i, q := range reqs {
		st, err := s.sendHostile(ctx, rep.URL, q)
		switch {
		case err != nil:
			dropped++
			droppedEx = append(droppedEx, fmt.Sprintf("%s: %v", q.name, err))
		case st >= 500:
			fivexx++
			fivexxEx = append(fivexxEx, fmt.Sprintf("%s: %d", q.name, st))
		}
		if q.foreign {
			foreign++
			if st != 404 {
				foreignBad++
				foreignEx = append(foreignEx, fmt.Sprintf("%s: %d", q.name, st))
			}
		}
		if q.null {
			nulls++
			if st != 400 {
				nullBad++
				nullEx = append(nullEx, fmt.Sprintf("%s: %d", q.name, st))
			}
		}
		if err == nil && q.want != 0 && st != q.want && !q.foreign && !q.null {
			mismatched++
			mismatchEx = append(mismatchEx, fmt.Sprintf("%s: %d, documented %d", q.name, st, q.want))
		}
		if (i+1)%100 == 0 {
			s.progress("hostile: %d/%d requests, %d 5xx", i+1, len(reqs), fivexx)
		}
	}
	alive := rep.alive()
	if st, _, err := s.cl.status(ctx, rep.URL, "", "GET", "/healthz", nil); err != nil || st != 200 {
		alive = false
	}
	rp := s.report
	rp.atMost(sc, "5xx answers", fivexx, 0, examples(fivexxEx))
	rp.atMost(sc, "dropped connections", dropped, 0, examples(droppedEx))
	rp.check(sc, "another user's ids answered 404", foreignBad == 0, fmt.Sprintf("%d of %d", foreign-foreignBad, foreign), fmt.Sprintf("%d of %d", foreign, foreign), examples(foreignEx))
	rp.check(sc, "null bodies answered 400", nullBad == 0, fmt.Sprintf("%d of %d", nulls-nullBad, nulls), fmt.Sprintf("%d of %d", nulls, nulls), examples(nullEx))
	rp.atMost(sc, "answers other than the documented status", mismatched, 0, examples(mismatchEx))
	rp.check(sc, "server alive afterwards", alive, fmt.Sprint(alive), "true", "")
	rp.figure(sc, "hostile requests tried / 5xx seen", "%d / %d", len(reqs), fivexx)
	return nil
}

// sendHostile sends q and returns the status.
func (s *suite) sendHostile(ctx context.Context, base string, q hostileReq) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var rd io.Reader
	if q.body != nil {
		rd = bytes.NewReader(q.body)
		if q.chunked {
			rd = io.MultiReader(rd) // no length: sent chunked
		}
	}
	req, err := http.NewRequestWithContext(ctx, q.method, base+q.path, rd)
	if err != nil {
		return 0, err
	}
	switch {
	case q.contentType == "none":
	case q.contentType != "":
		req.Header.Set("Content-Type", q.contentType)
	case q.body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	if q.token != "" {
		req.Header.Set("Authorization", "Bearer "+q.token)
	}
	for i := 0; i+1 < len(q.headers); i += 2 {
		req.Header[q.headers[i]] = []string{q.headers[i+1]} // as given, even invalid
	}
	resp, err := s.cl.hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// hostileCatalogue is the fixed part of the hostile requests.
func hostileCatalogue(aTok, bTok, aConv, aTurn, bConv, bTurn string) []hostileReq {
	c := &catalogue{aTok: aTok}
	c.bodies(aConv)
	c.unknownIDs()
	c.foreignIDs(aTok, bTok, aConv, aTurn, bConv, bTurn)
	c.headersAndTokens(aTurn)
	return c.out
}

// catalogue collects hostile requests; those without a token are alice's.
type catalogue struct {
	aTok string
	out  []hostileReq
}

// add appends q with alice's token when it has none, and with no token
// when its token is "-".
func (c *catalogue) add(q hostileReq) {
	if q.token == "" {
		q.token = c.aTok
	}
	if q.token == "-" {
		q.token = ""
	}
	c.out = append(c.out, q)
}

// bodies adds, for each route that takes JSON, malformed, null, oversized
// and invalid UTF-8 bodies and the wrong content types, then the limits of
// a turn's message.
func (c *catalogue) bodies(aConv string) {
	jsonRoutes := []struct{ name, path string }{
		{"create conversation", "/api/conversations"},
		{"post turn", "/api/conversations/" + aConv + "/turns"},
		{"chat", "/api/chat"},
		{"session", "/api/session"},
	}
	malformed := []string{
		`{`, `{"content":`, `[`, `"text"`, `123`, `true`, `{"content":1}`, `{"content":"x"}{"content":"y"}`,
		`{"content":"x",}`, `{'content':'x'}`, "{\"content\":\"x\"\x00}", strings.Repeat("[", 100000),
		`{"content":{"$gt":""}}`, `{"titel":"x","content":"x"}`, `{"content":"x","token":1,"conversationId":[]}`,
		"\xef\xbb\xbf{\"content\":\"x\"}",
	}
	big := []byte(`{"content":"` + strings.Repeat("a", 1<<20+10) + `"}`)
	for _, r := range jsonRoutes {
		for i, b := range malformed {
			c.add(hostileReq{name: fmt.Sprintf("%s, malformed body %d", r.name, i), method: "POST", path: r.path, body: []byte(b), want: 400})
		}
		for _, b := range []string{"null", " null ", "null\n", "\tnull"} {
			c.add(hostileReq{name: fmt.Sprintf("%s, body %q", r.name, b), method: "POST", path: r.path, body: []byte(b), null: true})
		}
		c.add(hostileReq{name: r.name + ", body over 1 MiB", method: "POST", path: r.path, body: big, want: 413})
		c.add(hostileReq{name: r.name + ", body over 1 MiB without a length", method: "POST", path: r.path, body: big, chunked: true, want: 413})
		c.add(hostileReq{name: r.name + ", invalid UTF-8", method: "POST", path: r.path, body: []byte("{\"content\":\"\xc3\x28\",\"title\":\"\xff\xfe\",\"token\":\"\xff\"}"), want: 400})
		c.add(hostileReq{name: r.name + ", text/plain", method: "POST", path: r.path, body: []byte(`{"content":"x"}`), contentType: "text/plain", want: 415})
		c.add(hostileReq{name: r.name + ", multipart", method: "POST", path: r.path, body: []byte("--x\r\n\r\n--x--"), contentType: "multipart/form-data; boundary=x", want: 415})
		c.add(hostileReq{name: r.name + ", empty body", method: "POST", path: r.path, body: []byte{}, want: 400})
	}
	c.add(hostileReq{name: "post turn, message over the limit", method: "POST", path: "/api/conversations/" + aConv + "/turns",
		body: []byte(`{"content":"` + strings.Repeat("é", 40<<10) + `"}`), want: 413})
	c.add(hostileReq{name: "post turn, NUL in content", method: "POST", path: "/api/conversations/" + aConv + "/turns", body: []byte(`{"content":"a\u0000b"}`), want: 400})
	c.add(hostileReq{name: "post turn, Idempotency-Key over 200 bytes", method: "POST", path: "/api/conversations/" + aConv + "/turns",
		body: []byte(`{"content":" "}`), headers: []string{"Idempotency-Key", strings.Repeat("k", 300)}, want: 400})
}

// unknownIDs adds requests naming ids that exist nowhere, some not ids at
// all: every one must be 404.
func (c *catalogue) unknownIDs() {
	unknown := []string{
		"00000000-0000-4000-8000-000000000000", "not-an-id", strings.Repeat("a", 5000), "%00", "%ff%fe",
		"..%2f..%2fetc%2fpasswd", "'%20or%20'1'='1", "%E8%B0%83%E7%94%A8", "%E2%80%AE", "1e309", "-1",
	}
	for _, id := range unknown {
		c.add(hostileReq{name: "get conversation " + clip(id), method: "GET", path: "/api/conversations/" + id, want: 404})
		c.add(hostileReq{name: "delete conversation " + clip(id), method: "DELETE", path: "/api/conversations/" + id, want: 404})
		c.add(hostileReq{name: "post turn in " + clip(id), method: "POST", path: "/api/conversations/" + id + "/turns", body: []byte(`{"content":"hi"}`), want: 404})
		c.add(hostileReq{name: "get turn " + clip(id), method: "GET", path: "/api/turns/" + id, want: 404})
		c.add(hostileReq{name: "events of " + clip(id), method: "GET", path: "/api/turns/" + id + "/events", want: 404})
		c.add(hostileReq{name: "cancel " + clip(id), method: "POST", path: "/api/turns/" + id + "/cancel", want: 404})
	}
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-an-id", strings.Repeat("b", 5000), "\u202e"} {
		c.add(hostileReq{name: "chat in unknown conversation " + clip(id), method: "POST", path: "/api/chat",
			body: []byte(`{"conversationId":"` + id + `","content":"hi"}`), want: 404})
	}
}

// foreignIDs adds every route with another user's ids, both ways.
func (c *catalogue) foreignIDs(aTok, bTok, aConv, aTurn, bConv, bTurn string) {
	for _, p := range []struct {
		tok, conv, turn string
	}{{bTok, aConv, aTurn}, {aTok, bConv, bTurn}} {
		for _, q := range []hostileReq{
			{name: "get conversation", method: "GET", path: "/api/conversations/" + p.conv},
			{name: "delete conversation", method: "DELETE", path: "/api/conversations/" + p.conv},
			{name: "post turn", method: "POST", path: "/api/conversations/" + p.conv + "/turns", body: []byte(`{"content":"hi"}`)},
			{name: "get turn", method: "GET", path: "/api/turns/" + p.turn},
			{name: "events", method: "GET", path: "/api/turns/" + p.turn + "/events"},
			{name: "events with Last-Event-ID", method: "GET", path: "/api/turns/" + p.turn + "/events", headers: []string{"Last-Event-ID", "1"}},
			{name: "cancel", method: "POST", path: "/api/turns/" + p.turn + "/cancel"},
			{name: "chat", method: "POST", path: "/api/chat", body: []byte(`{"conversationId":"` + p.conv + `","content":"hi"}`)},
		} {
			q.name = "another user's id: " + q.name
			q.token, q.foreign = p.tok, true
			c.add(q)
		}
	}
}

// headersAndTokens adds bad cursors, bad tokens, a huge header, wrong
// methods and unknown routes.
func (c *catalogue) headersAndTokens(aTurn string) {
	for _, h := range [][]string{
		{"Last-Event-ID", "abc"}, {"Last-Event-ID", "-5"}, {"Last-Event-ID", "99999999999999999999"},
		{"Last-Event-ID", "\xff\xfe"}, {"Last-Event-ID", "1e3"}, {"Last-Event-ID", strings.Repeat("9", 5000)},
	} {
		c.add(hostileReq{name: "events, Last-Event-ID " + clip(h[1]), method: "GET", path: "/api/turns/" + aTurn + "/events", headers: h, want: 400})
	}
	for _, q := range []string{"%ff", "-1", "x", "1.5", "%00"} {
		c.add(hostileReq{name: "events, after=" + q, method: "GET", path: "/api/turns/" + aTurn + "/events?after=" + q, want: 400})
	}
	for _, tok := range []string{"-", "tm_not-a-token", "tm_" + strings.Repeat("x", 10000), "\xff\xfe"} {
		c.add(hostileReq{name: "conversations with token " + clip(tok), method: "GET", path: "/api/conversations", token: tok, want: 401})
	}
	c.add(hostileReq{name: "basic auth", method: "GET", path: "/api/conversations", token: "-", headers: []string{"Authorization", "Basic YTpi"}, want: 401})
	c.add(hostileReq{name: "header of 512 KB", method: "GET", path: "/api/conversations", headers: []string{"X-Big", strings.Repeat("h", 512<<10)}, want: 200})
	for _, m := range []string{"PUT", "PATCH"} {
		c.add(hostileReq{name: m + " conversations", method: m, path: "/api/conversations", body: []byte(`{}`), want: 405})
	}
	c.add(hostileReq{name: "unknown route", method: "GET", path: "/api/../../etc/passwd", want: 0})
	c.add(hostileReq{name: "unknown api route", method: "GET", path: "/api/nope", want: 404})
}

// randomBodyRequest posts random bytes as a JSON body to one of the JSON
// routes that cannot start a long turn.
func (s *suite) randomBodyRequest(token, conv string) hostileReq {
	n := s.intn(2000)
	b := make([]byte, n)
	alphabet := []byte(`{}[]",:0123456789abcdefnulltrue \\u00` + "\xff\xc3\x00\n")
	for i := range b {
		if s.intn(4) == 0 {
			b[i] = byte(s.intn(256))
		} else {
			b[i] = alphabet[s.intn(len(alphabet))]
		}
	}
	paths := []string{"/api/conversations", "/api/conversations/" + conv + "/turns", "/api/session"}
	return hostileReq{name: fmt.Sprintf("random body of %d bytes", n), method: "POST", path: paths[s.intn(len(paths))], body: b, token: token}
}

func clip(s string) string {
	if len(s) > 24 {
		return fmt.Sprintf("%.20q…(%d bytes)", s, len(s))
	}
	return fmt.Sprintf("%q", s)
}
