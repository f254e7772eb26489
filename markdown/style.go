package markdown

// Stylesheet is a CSS stylesheet for the widgets: a page that shows rendered
// messages can embed it as it is. It animates the spinner of pending and
// running calls, colours the success mark green and the error mark and text
// red, indents nested calls and hides the state label (for screen readers)
// from the screen.
const Stylesheet = `.toolcall{display:flex;flex-wrap:wrap;align-items:center;gap:.4em;margin:.4em 0;font-size:.92em;color:#444}
.toolcall--inline{display:inline-flex;margin:0 .2em;vertical-align:middle}
.toolcall__text{white-space:pre-line}
.toolcall__label{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.toolcall__icon{display:inline-block;width:1em;text-align:center;font-weight:bold}
.toolcall__icon--spinner{width:.8em;height:.8em;border:2px solid #bbb;border-top-color:#555;border-radius:50%;animation:toolcall-spin .8s linear infinite}
.toolcall__icon--success{color:#1a7f37}
.toolcall__icon--error{color:#cf222e}
.toolcall__icon--cancelled{color:#888}
.toolcall__error{flex-basis:100%;color:#cf222e;font-size:.9em;white-space:pre-wrap;overflow-wrap:anywhere}
.toolcall__children{flex-basis:100%;margin:0;padding-left:1.4em;list-style:none}
.toolcall--inline .toolcall__children{display:inline}
@keyframes toolcall-spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.toolcall__icon--spinner{animation:none}}
`
