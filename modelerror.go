package toolmark

// Codes of the errors a model service causes. They reach people in the
// data of turn_failed, in a tool's error, in a sub-agent's status and in
// model_retry, each with a short sentence (ModelErrorText); the service's
// own words, URLs and hosts go to the log only. EUNAVAILABLE (the service
// could not be reached or failed) is the code of errors that fit no other.
const (
	ERATELIMITED    = "rate_limited"     // the service asked to slow down (HTTP 429)
	EOVERLOADED     = "overloaded"       // the service is overloaded (HTTP 529, overloaded_error)
	EAUTH           = "auth"             // the service refused the credentials (HTTP 401, 403)
	EBADREQUEST     = "bad_request"      // the service refused the request (HTTP 400, 404, 422)
	ETIMEOUT        = "timeout"          // the service did not answer in time
	ECONTEXTTOOLONG = "context_too_long" // the conversation is longer than the model's context
	ECANCELLED      = "cancelled"        // the turn was stopped
)

// ModelErrorText returns the sentence people see for a model error of the
// given code: what happened and what to do.
func ModelErrorText(code string) string {
	switch code {
	case ERATELIMITED:
		return "The model service is rate limiting requests; try again in a minute."
	case EOVERLOADED:
		return "The model service is overloaded; try again in a minute."
	case EAUTH:
		return "The model service rejected the API key; check the server's model settings."
	case EBADREQUEST:
		return "The model service rejected the request; check the model name and settings."
	case ETIMEOUT:
		return "The model service did not answer in time; try again."
	case ECONTEXTTOOLONG:
		return "The conversation is too long for the model; start a new conversation."
	case ECANCELLED:
		return "Stopped."
	}
	return "The model service could not be reached; try again shortly."
}
