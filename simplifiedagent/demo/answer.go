package demo

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The answer the demo model writes after its tools ran:
//
//	*(offline demo model: …)*
//
//	**How do clients resume a stream?** A whole sentence from the first
//	source [1]. Another from the second [2].
//
//	**What happens on cancellation?** …
//
//	I could not fetch https://example.com/: could not reach example.com.
//
//	Sources:
//
//	- [1] Resuming a stream after a disconnect — toolmark-docs/resume.md
//
// One short paragraph per part of the question, made of whole sentences of
// the documents the searches found (the bundled corpus holds them; for
// other documents, the complete sentences of the search snippet), each
// source numbered once across the answer, and each failed tool reported
// in a sentence of its own.

// maxSentences is how many sentences a part's paragraph quotes.
const maxSentences = 3

// hitRE reads one hit of a search result (tools.FormatHits).
var hitRE = regexp.MustCompile(`(?m)^\[(\d+)\] (.*) \((\S*)\)\n(.*)$`)

// citeRE finds citations in a sub-agent's answer.
var citeRE = regexp.MustCompile(`\[(\d+)\]`)

// sourceRE reads a line of an answer's source list.
var sourceRE = regexp.MustCompile(`^- \[(\d+)\] (.*) — (\S*)$`)

type source struct{ title, where string }

// composer writes one answer.
type composer struct {
	example bool // the question asks for an example: quote a code block of a source
	sources []source
	quoted  map[string]bool // sentences already in the answer
	paras   []string
	failed  []string
}

// cite returns the number of s in the answer's source list, adding it.
func (c *composer) cite(s source) int {
	for i, x := range c.sources {
		if x.where == s.where || (x.where == "" && x.title == s.title) {
			return i + 1
		}
	}
	c.sources = append(c.sources, s)
	return len(c.sources)
}

// compose writes the answer to question from the tool results.
func compose(question string, results []toolResult) string {
	c := &composer{quoted: map[string]bool{}, example: strings.Contains(strings.ToLower(question), "example")}
	used := make([]bool, len(results))
	for _, part := range Parts(question) {
		c.answerPart(part, results, used)
	}
	c.unasked(results, used)
	return c.write(question)
}

// answerPart writes the paragraph of one part of the question from the
// results about it, marking them used; a failed one goes to c.failed.
func (c *composer) answerPart(part string, results []toolResult, used []bool) {
	var sentences []string
	found := false
	kw := Keywords(part)
	for i, r := range results {
		if used[i] || !r.about(part, kw) {
			continue
		}
		used[i] = true
		if msg, failed := strings.CutPrefix(r.content, "error: "); failed {
			c.failed = append(c.failed, failure(r, msg))
			continue
		}
		switch r.name {
		case "subagent":
			found = true
			sentences = append(sentences, c.subagentSentences(r.content)...)
		default:
			for _, h := range hitRE.FindAllStringSubmatch(r.content, 3) {
				found = true
				if len(sentences) >= maxSentences {
					break
				}
				if s := c.quote(h[2], h[3], h[4], kw); s != "" {
					sentences = append(sentences, s)
				}
			}
		}
	}
	lead := "**" + asHeading(part) + "** "
	switch {
	case len(sentences) > 0:
		c.paras = append(c.paras, lead+strings.Join(sentences, " "))
		if c.example {
			if code := c.codeExample(results, used); code != "" {
				c.paras = append(c.paras, code)
				c.example = false
			}
		}
	case found:
		c.paras = append(c.paras, lead+"The documents I found mention it, but no sentence of theirs answers it directly.")
	default:
		c.paras = append(c.paras, lead+"I found nothing about it in the documents.")
	}
}

// unasked writes the results no part asked for: pages fetched, tools that
// failed.
func (c *composer) unasked(results []toolResult, used []bool) {
	for i, r := range results {
		if used[i] || r.name == "todo_list" {
			continue
		}
		if msg, failed := strings.CutPrefix(r.content, "error: "); failed {
			c.failed = append(c.failed, failure(r, msg))
			continue
		}
		switch r.name {
		case "fetch_url":
			c.paras = append(c.paras, c.fetched(r))
		case "search_documents", "web_search", "subagent":
			// a retry whose part was answered, or a call of the model's own
		default:
			c.paras = append(c.paras, fmt.Sprintf("The %s tool returned: %s", r.name, sentence(toolcallmarkup.OneLine(r.content, 200))))
		}
	}
}

// fetched returns the paragraph of a page fetch_url read: its first
// sentences, cited.
func (c *composer) fetched(r toolResult) string {
	u, _ := r.args["url"].(string)
	title, body := "", r.content
	if t, rest, ok := strings.Cut(body, "\n"); ok && strings.HasPrefix(t, "Title: ") {
		title, body = strings.TrimPrefix(t, "Title: "), rest
	}
	if _, rest, ok := strings.Cut(body, "\n\n"); ok {
		body = rest
	}
	n := c.cite(source{title: firstNonEmpty(title, u), where: u})
	text := strings.Join(firstSentences(body, 2), " ")
	if text == "" {
		if ex := excerpt(body); ex != "" {
			text = "The page begins: “" + ex + "”"
		} else {
			text = "The page has no readable text."
		}
	}
	return "**What " + u + " says.** " + withCite(text, n)
}

// write lays out the answer: the banner, the paragraphs, the failures and
// the numbered sources.
func (c *composer) write(question string) string {
	var b strings.Builder
	b.WriteString(Banner + "\n\n")
	if len(c.paras) == 0 && len(c.failed) == 0 {
		fmt.Fprintf(&b, "I can only answer from the bundled documents, and I had no tool results for %q. "+
			"Ask about toolmark: its markup, events, resume, cancellation or deployment.", toolcallmarkup.OneLine(question, 100))
		return b.String()
	}
	for _, p := range c.paras {
		b.WriteString(p + "\n\n")
	}
	for _, f := range c.failed {
		// A sub-agent's answer quoted above may have said it already.
		if !strings.Contains(b.String(), f) {
			b.WriteString(f + "\n\n")
		}
	}
	if len(c.sources) > 0 {
		b.WriteString("Sources:\n\n")
		for i, s := range c.sources {
			fmt.Fprintf(&b, "- [%d] %s — %s\n", i+1, toolcallmarkup.OneLine(s.title, 120), s.where)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// about reports whether r answers part (whose search words are kw).
func (r toolResult) about(part, kw string) bool {
	switch r.name {
	case "subagent":
		t, _ := r.args["task"].(string)
		return t == Task(part)
	case "search_documents", "web_search":
		q, _ := r.args["query"].(string)
		return kw != "" && (q == kw || q == strings.Join(strings.Fields(kw), " or "))
	}
	return false
}

// quote returns the sentence of a hit that answers best, cited, or "".
func (c *composer) quote(title, where, snippet, kw string) string {
	cands := corpusSentences(where)
	best, score := "", 0
	for _, s := range cands {
		if c.quoted[s] || definition(s) {
			continue
		}
		if n := matches(s, kw); n > score {
			best, score = s, n
		}
	}
	if best == "" {
		for _, s := range completeSentences(strings.NewReplacer("«", "", "»", "").Replace(snippet)) {
			if !c.quoted[s] && matches(s, kw) > 0 {
				best = s
				break
			}
		}
	}
	if best == "" {
		// No whole sentence: quote the excerpt the search found.
		ex := excerpt(snippet)
		if ex == "" || c.quoted[ex] || matches(ex, kw) == 0 {
			return ""
		}
		c.quoted[ex] = true
		return withCite("One document says: “"+ex+"”", c.cite(source{title: title, where: where}))
	}
	c.quoted[best] = true
	return withCite(best, c.cite(source{title: title, where: where}))
}

// codeExample returns the first code block of a document a search of
// this part found, introduced by the sentence before it, or "".
func (c *composer) codeExample(results []toolResult, used []bool) string {
	for i, r := range results {
		if !used[i] || strings.HasPrefix(r.content, "error: ") {
			continue
		}
		for _, h := range hitRE.FindAllStringSubmatch(r.content, 3) {
			doc := corpusDocument(h[3])
			start := strings.Index(doc, "\n```")
			if start < 0 {
				continue
			}
			end := strings.Index(doc[start+4:], "\n```")
			if end < 0 {
				continue
			}
			block := doc[start+1 : start+4+end+4]
			intro := "Here is an example from " + h[2]
			if lines := strings.Split(strings.TrimSpace(doc[:start]), "\n"); len(lines) > 0 {
				if last := strings.TrimSpace(lines[len(lines)-1]); strings.HasSuffix(last, ":") && startsSentence(last) {
					intro = strings.TrimSuffix(last, ":")
				}
			}
			n := c.cite(source{title: h[2], where: h[3]})
			return intro + fmt.Sprintf(" [%d]:", n) + "\n\n" + block
		}
	}
	return ""
}

// excerptMarkup are the characters of a source that would turn a quoted
// excerpt into markup.
var excerptMarkup = strings.NewReplacer("«", "", "»", "", "`", "", "*", "", "_", " ", "#", "", "[", "(", "]", ")", "|", " ")

// excerpt returns text as a one-line quote of at most 240 bytes, without
// markup characters.
func excerpt(text string) string {
	return toolcallmarkup.OneLine(excerptMarkup.Replace(text), 240)
}

// definition reports whether s is the entry of a definition list
// ("`cancelled` — the turn was …"), which reads badly on its own.
func definition(s string) bool {
	i := strings.Index(s, " — ")
	return strings.HasPrefix(s, "`") && i >= 0 && i < 40
}

// subagentSentences returns the sentences of a sub-agent's answer with its
// citations renumbered into this answer's source list.
func (c *composer) subagentSentences(answer string) []string {
	renumber := map[string]string{}
	var text []string
	for _, line := range strings.Split(strings.ReplaceAll(answer, Banner, ""), "\n") {
		line = strings.TrimSpace(line)
		if m := sourceRE.FindStringSubmatch(line); m != nil {
			renumber[m[1]] = fmt.Sprint(c.cite(source{title: m[2], where: m[3]}))
			continue
		}
		if line == "" || line == "Sources:" {
			continue
		}
		if strings.HasPrefix(line, "**") {
			if i := strings.Index(line[2:], "**"); i >= 0 {
				line = strings.TrimSpace(line[i+4:])
			}
		}
		if line != "" && !strings.HasPrefix(line, "I found nothing") {
			text = append(text, line)
		}
	}
	out := citeRE.ReplaceAllStringFunc(strings.Join(text, " "), func(m string) string {
		if n, ok := renumber[m[1:len(m)-1]]; ok {
			return "[" + n + "]"
		}
		return m
	})
	if out == "" {
		return nil
	}
	return []string{out}
}

// failure is the sentence that reports a failed tool.
func failure(r toolResult, msg string) string {
	msg = strings.TrimSuffix(toolcallmarkup.OneLine(msg, 200), ".")
	switch r.name {
	case "search_documents", "web_search":
		q, _ := r.args["query"].(string)
		return fmt.Sprintf("The search for “%s” failed: %s.", q, msg)
	case "fetch_url":
		u, _ := r.args["url"].(string)
		return fmt.Sprintf("I could not fetch %s: %s.", u, msg)
	case "subagent":
		t, _ := r.args["task"].(string)
		return fmt.Sprintf("The sub-agent given “%s” failed: %s.", t, msg)
	}
	return fmt.Sprintf("The %s tool failed: %s.", r.name, msg)
}

// sentencesOf returns the sentences of a markdown document's paragraphs and
// list items; headings, code blocks and tables are left out.
func sentencesOf(doc string) []string {
	var out []string
	inCode := false
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, completeSentences(strings.Join(para, " "))...)
			para = nil
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```"):
			inCode = !inCode
			flush()
		case inCode:
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|"):
			flush()
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flush()
			para = append(para, strings.TrimSpace(t[2:]))
		default:
			para = append(para, t)
		}
	}
	flush()
	return out
}

// completeSentences splits text into sentences and keeps the complete ones:
// starting with a capital letter, a digit or code, ending in . ! or ?.
func completeSentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if ch != '.' && ch != '!' && ch != '?' {
			continue
		}
		if i+2 < len(text) && text[i+1] == ' ' && startsSentence(text[i+2:]) || i == len(text)-1 {
			s := strings.TrimSpace(text[start : i+1])
			start = i + 1
			if startsSentence(s) && utf8.RuneCountInString(s) >= 20 && strings.Count(s, "`")%2 == 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

func startsSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || r == '`' || r == '"' || r == '“'
}

// firstSentences returns the first n complete sentences of text.
func firstSentences(text string, n int) []string {
	s := completeSentences(text)
	return s[:min(n, len(s))]
}

// matches counts the search words that s mentions (by their first five
// letters, so that "resume" finds "resuming").
func matches(s, kw string) int {
	lower := strings.ToLower(s)
	n := 0
	for _, w := range strings.Fields(kw) {
		if w == "or" {
			continue
		}
		if len(w) > 5 {
			w = w[:5]
		}
		if strings.Contains(lower, w) {
			n++
		}
	}
	return n
}

// withCite puts the citation [n] before the sentence's final stop.
func withCite(s string, n int) string {
	cite := fmt.Sprintf(" [%d]", n)
	if k := len(s) - 1; k >= 0 && (s[k] == '.' || s[k] == '!' || s[k] == '?') {
		return s[:k] + cite + s[k:]
	}
	return s + cite + "."
}

// sentence ends s with a full stop.
func sentence(s string) string {
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?…") {
		return s
	}
	return s + "."
}

var questionWords = map[string]bool{"how": true, "what": true, "why": true, "when": true, "where": true, "which": true,
	"who": true, "does": true, "do": true, "is": true, "are": true, "can": true, "should": true, "will": true}

// asHeading writes a part of the question as the lead of its paragraph:
// capitalised, with a question mark for a question.
func asHeading(part string) string {
	p := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(part, "and "), "And "))
	if t := strings.TrimPrefix(Task(p), "Look up "); t != p {
		return capitalize(strings.TrimRight(t, " ,;:.!?")) + "." // "Research how X works" → "How X works."
	}
	p = capitalize(strings.TrimRight(p, " ,;:.!?"))
	first := strings.ToLower(strings.Fields(p + " x")[0])
	if questionWords[first] {
		return p + "?"
	}
	return p + "."
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
