package llmhttp

import "github.com/framewire/framewire/internal/jsontext"

// Scanner is [jsontext.Scanner], the pull parser the stream decoders share,
// under the name processors/llm/openai still imports it by. New code names
// jsontext.Scanner; this alias goes once openai does too.
type Scanner = jsontext.Scanner
