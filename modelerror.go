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
	ESERVICEFAILED  = "service_failed"   // the service was reached and failed (HTTP 5xx, an in-stream server_error)
	ESTREAMCUT      = "stream_cut"       // the answer's stream ended before the model finished
	EQUOTA          = "quota_exceeded"   // the account's quota is used up (OpenAI's insufficient_quota)
	ECREDIT         = "credit_exhausted" // the account's credit balance is too low (Anthropic; HTTP 402 elsewhere)
	EBADRESPONSE    = "bad_response"     // the service's answer could not be read (not JSON, an unknown shape)
)

// Codes of how a model's answer stopped short, each with its sentence
// (ModelErrorText): the turn fails with it, keeping what streamed.
const (
	ETOKENLIMIT = "token_limit" // the answer or a tool call was cut at the token limit (length, max_tokens)
	EFILTERED   = "filtered"    // the service's content filter stopped the answer (content_filter)
	EREFUSED    = "refused"     // the model declined to answer (Anthropic's refusal)
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
	case ESERVICEFAILED:
		return "The model service failed while answering; try again shortly."
	case ESTREAMCUT:
		return "The model's answer was cut off before it finished; what arrived is kept."
	case EQUOTA:
		return "The model service account has used up its quota; check the account's plan or credit."
	case ECREDIT:
		return "The model service account's credit balance is too low; check the account's plan or credit."
	case EBADRESPONSE:
		return "The model service sent an answer that could not be read; check the model name and settings."
	case ETOKENLIMIT:
		return "The answer was cut off at the model's token limit."
	case EFILTERED:
		return "The model service's content filter stopped the answer."
	case EREFUSED:
		return "The model declined to answer."
	}
	return "The model service could not be reached; try again shortly."
}
