// Package markdown renders assistant messages — markdown with genuine
// <ToolCall> tags — to HTML that is safe to put in a page.
//
// Render is the entry point of the api and the web page; New builds a
// configured Renderer. ToolCall and NewToolCall are the goldmark extension on
// its own, for callers with a goldmark setup of their own.
//
// # Tool-call widgets
//
// Tags are found with toolcallmarkup.Scan, the project's one parser for them.
// A tag on a line of its own becomes a block widget (a <div>), a tag inside a
// paragraph, list item, heading or link text an inline one (a <span>).
// Nested calls are a list under their parent:
//
//	<div class="toolcall toolcall--running" data-tool-call-id="call_1"
//	     data-status="running" data-tool-type="search_documents">
//	  <span class="toolcall__icon toolcall__icon--spinner" aria-hidden="true"></span>
//	  <span class="toolcall__label">Running: </span>
//	  <span class="toolcall__text">Searching knowledge base for:
//	rust</span>
//	  [<span class="toolcall__error">…</span>]
//	  [<ul class="toolcall__children"><li class="toolcall__child">…</li></ul>]
//	</div>
//
// The status text comes from a statustext.Func per tool type (WithStatusText);
// docs/rendering.md lists the contract a page relies on.
//
// # Model text cannot swallow a widget
//
// Markdown constructs that take text literally — code spans, fenced and
// indented code, HTML blocks, raw HTML, autolinks, link destinations and
// titles — end before a genuine tag or do not start across one, and no table
// or link reference definition is made from a paragraph holding one. A model
// that leaves a fence or a backtick open before a tool call therefore cannot
// hide the widget: every element toolcallmarkup.Scan finds is rendered
// exactly once.
//
// # Safety
//
// Raw HTML is off: model-written HTML is shown as text. Links and images keep
// their URL only for http, https, mailto and relative URLs. The output then
// goes through a bluemonday policy (DefaultPolicy) that allows the widget
// markup and nothing executable; with that policy the widgets, written by the
// extension with every value escaped, are spliced in after the pass. Inside code, toolcallmarkup.RestoreText
// undoes the neutralisation of model text, so "<ToolCall …>" written by the
// model in a code block shows exactly as written.
package markdown
