package wire

// This file decodes server-to-client messages, for Go clients and tests
// that talk to an RTVI server. Opaque members (about, payloads, results,
// server-message data) come back as RawJSON.

// DecodeServerMessage parses one server-to-client RTVI message. Data holds
// the typed model of a known type (for example *BotOutput, or
// *UITask for ui-job-group and ui-task), a RawJSON for server-message
// and unknown types, and nil when the message has no data. Errors are
// classified like [Decode]'s, except that the id is optional.
func DecodeServerMessage(b []byte) (Message, error) {
	if err := validJSON(b); err != nil {
		return Message{}, err
	}
	r := reader{b: b}
	if r.peek() != kindObject {
		return Message{}, ErrNotRTVI
	}
	var (
		m                  Message
		label              string
		haveType           bool
		envErr             error
		dataStart, dataEnd = -1, -1
	)
	err := r.object(func(key []byte) error {
		switch string(key) {
		case "label":
			if r.peek() == kindString {
				s, err := r.str()
				label = s
				return err
			}
		case "type":
			s, err := r.readString()
			if err != nil {
				envErr = at(err, "type")
				return nil
			}
			m.Type, haveType = s, true
			return nil
		case "id":
			s, err := r.readString()
			if err != nil {
				envErr = at(err, "id")
				return nil
			}
			m.ID, m.idSet = s, true
			return nil
		case "data":
			if r.null() {
				return nil
			}
			r.ws()
			dataStart = r.i
			err := r.skip()
			dataEnd = r.i
			return err
		}
		return r.skip()
	})
	switch {
	case err != nil:
		return Message{}, &EnvelopeError{err}
	case label != Label:
		return Message{}, ErrNotRTVI
	case envErr != nil:
		return Message{}, &EnvelopeError{envErr}
	case !haveType:
		return Message{}, &EnvelopeError{missing("type")}
	}
	if dataStart < 0 {
		return m, nil
	}
	dr := reader{b: b[dataStart:dataEnd]}
	p, err := decodeServerData(&dr, m.Type)
	if err != nil {
		return Message{Type: m.Type, ID: m.ID}, &DataError{ID: m.ID, Type: m.Type, Err: err}
	}
	m.Data = p
	return m, nil
}

func decodeServerData(r *reader, typ string) (Payload, error) {
	switch typ {
	case TypeServerMessage:
		return r.raw()
	case TypeBotReady:
		d := &BotReady{}
		return d, r.fields(map[string]func() error{
			"version": r.stringInto(&d.Version),
			"about":   r.payloadInto(&d.About),
		}, "version")
	case TypeError:
		d := &Error{}
		return d, r.fields(map[string]func() error{
			"error": r.stringInto(&d.Error),
			"fatal": r.boolInto(&d.Fatal),
		}, "error")
	case TypeErrorResponse:
		d := &ErrorResponse{}
		return d, r.fields(map[string]func() error{"error": r.stringInto(&d.Error)}, "error")
	case TypeServerResponse:
		d := &ServerResponse{}
		return d, r.fields(map[string]func() error{
			"t": r.stringInto(&d.T),
			"d": r.payloadInto(&d.D),
		}, "t")
	case TypeUserTranscription:
		d := &Transcription{}
		return d, r.fields(map[string]func() error{
			"text":      r.stringInto(&d.Text),
			"user_id":   r.stringInto(&d.UserID),
			"timestamp": r.stringInto(&d.Timestamp),
			"final":     r.boolInto(&d.Final),
		}, "text")
	case TypeUserLLMText, TypeBotLLMText, TypeBotTranscription, TypeBotTTSText, TypeSystemLog:
		d := &Text{}
		return d, r.fields(map[string]func() error{"text": r.stringInto(&d.Text)}, "text")
	case TypeBotOutput:
		return decodeBotOutput(r)
	case TypeUserAudioLevel, TypeBotAudioLevel:
		d := &AudioLevel{}
		return d, r.fields(map[string]func() error{"value": r.floatInto(&d.Value)}, "value")
	case TypeLLMFunctionCallStarted:
		d := &FunctionCallStarted{}
		return d, r.fields(map[string]func() error{"function_name": r.stringInto(&d.FunctionName)})
	case TypeLLMFunctionCallInProgress:
		d := &FunctionCallInProgress{}
		return d, r.fields(map[string]func() error{
			"tool_call_id":  r.stringInto(&d.ToolCallID),
			"function_name": r.stringInto(&d.FunctionName),
			"arguments":     r.payloadInto(&d.Arguments),
		}, "tool_call_id")
	case TypeLLMFunctionCallStopped:
		d := &FunctionCallStopped{}
		return d, r.fields(map[string]func() error{
			"tool_call_id":  r.stringInto(&d.ToolCallID),
			"cancelled":     r.boolInto(&d.Cancelled),
			"function_name": r.stringInto(&d.FunctionName),
			"result":        r.payloadInto(&d.Result),
		}, "tool_call_id", "cancelled")
	case TypeLLMFunctionCall:
		d := &LLMFunctionCall{}
		return d, r.fields(map[string]func() error{
			"function_name": r.stringInto(&d.FunctionName),
			"tool_call_id":  r.stringInto(&d.ToolCallID),
			"args":          r.payloadInto(&d.Args),
		}, "function_name", "tool_call_id")
	case TypeMetrics:
		return decodeMetrics(r)
	case TypeBotLLMSearchResponse:
		return decodeSearchResponse(r)
	case TypeUICommand:
		d := &UICommand{}
		return d, r.fields(map[string]func() error{
			"command": r.stringInto(&d.Command),
			"payload": r.payloadInto(&d.Payload),
		}, "command")
	case TypeUIJobGroup:
		return decodeTask(r, VocabularyJobGroup)
	case TypeUITask:
		return decodeTask(r, VocabularyTask)
	case TypeBotTTSAudio:
		d := &BotTTSAudio{}
		return d, r.fields(map[string]func() error{
			"audio":        r.stringInto(&d.Audio),
			"sample_rate":  r.intInto(&d.SampleRate),
			"num_channels": r.intInto(&d.NumChannels),
		}, "audio", "sample_rate", "num_channels")
	case TypeAppendToContextResult:
		d := &AppendToContextResult{}
		return d, r.fields(map[string]func() error{"result": r.payloadInto(&d.Result)})
	case TypeUserStartedSpeaking, TypeUserStoppedSpeaking, TypeVADUserStartedSpeaking, TypeVADUserStoppedSpeaking,
		TypeUserMuteStarted, TypeUserMuteStopped, TypeBotStartedSpeaking, TypeBotStoppedSpeaking,
		TypeBotInterrupted, TypeBotLLMStarted, TypeBotLLMStopped, TypeBotTTSStarted, TypeBotTTSStopped:
		if k := r.peek(); k == kindObject {
			d := &Empty{}
			return d, r.skip()
		}
	}
	return r.raw()
}

// fields walks an object, calling the reader of each known member (and
// skipping the others), then checks the required ones.
func (r *reader) fields(readers map[string]func() error, required ...string) error {
	seen := make(map[string]bool, len(readers))
	err := r.readObject(func(key []byte) error {
		fn, ok := readers[string(key)]
		if !ok {
			return r.skip()
		}
		k := string(key)
		seen[k] = true
		return at(fn(), k)
	})
	if err != nil {
		return err
	}
	for _, k := range required {
		if !seen[k] {
			return missing(k)
		}
	}
	return nil
}

func (r *reader) stringInto(dst *string) func() error {
	return func() error {
		s, err := r.readString()
		*dst = s
		return err
	}
}

func (r *reader) boolInto(dst *bool) func() error {
	return func() error {
		v, err := r.readBool()
		*dst = v
		return err
	}
}

func (r *reader) intInto(dst *int) func() error {
	return func() error {
		v, err := r.readInt()
		*dst = int(v)
		return err
	}
}

func (r *reader) int64Into(dst *int64) func() error {
	return func() error {
		v, err := r.readInt()
		*dst = v
		return err
	}
}

func (r *reader) uint64Into(dst *uint64) func() error {
	return func() error {
		v, err := r.readInt()
		if err == nil && v < 0 {
			err = errNotInteger
		}
		*dst = uint64(v)
		return err
	}
}

func (r *reader) floatInto(dst *float64) func() error {
	return func() error {
		if k := r.peek(); k != kindNumber {
			return wrongType("number", k)
		}
		v, err := r.number()
		*dst = v
		return err
	}
}

func (r *reader) optBoolInto(dst *OptBool) func() error {
	return func() error {
		v, err := r.readOptBool()
		*dst = v
		return err
	}
}

// payloadInto keeps a member verbatim (null counts as absent).
func (r *reader) payloadInto(dst *Payload) func() error {
	return func() error {
		if r.null() {
			*dst = nil
			return nil
		}
		raw, err := r.raw()
		*dst = raw
		return err
	}
}

func decodeBotOutput(r *reader) (Payload, error) {
	d := &BotOutput{}
	return d, r.fields(map[string]func() error{
		"text":           r.stringInto(&d.Text),
		"aggregated_by":  r.stringInto(&d.AggregatedBy),
		"segment_id":     r.uint64Into(&d.SegmentID),
		"spoken":         r.optBoolInto(&d.Spoken),
		"will_be_spoken": r.optBoolInto(&d.WillBeSpoken),
		"spoken_status":  r.stringInto(&d.SpokenStatus),
		"spoken_progress": func() error {
			p := &SpokenProgress{}
			d.SpokenProgress = p
			return r.fields(map[string]func() error{
				"accumulated_text": r.stringInto(&p.AccumulatedText),
				"remaining_text":   r.stringInto(&p.RemainingText),
			}, "accumulated_text", "remaining_text")
		},
	}, "text")
}

func decodeMetrics(r *reader) (Payload, error) {
	d := &Metrics{}
	timing := func(list *[]TimingMetric) func() error {
		return func() error {
			return r.readArray(func(i int) error {
				var m TimingMetric
				err := r.fields(map[string]func() error{
					"processor": r.stringInto(&m.Processor),
					"model":     r.stringInto(&m.Model),
					"value":     r.floatInto(&m.Value),
				}, "processor", "value")
				*list = append(*list, m)
				return atIndex(err, i)
			})
		}
	}
	return d, r.fields(map[string]func() error{
		"ttfb":       timing(&d.TTFB),
		"processing": timing(&d.Processing),
		"ttfa": func() error {
			return r.readArray(func(i int) error {
				var m TTFAMetric
				err := r.fields(map[string]func() error{
					"processor": r.stringInto(&m.Processor), "model": r.stringInto(&m.Model),
					"ttfa": r.floatInto(&m.TTFA), "ttfb": r.floatInto(&m.TTFB), "leading_silence": r.floatInto(&m.LeadingSilence),
				}, "processor")
				d.TTFA = append(d.TTFA, m)
				return atIndex(err, i)
			})
		},
		"ttfat": func() error {
			return r.readArray(func(i int) error {
				var m TTFATMetric
				err := r.fields(map[string]func() error{
					"processor": r.stringInto(&m.Processor), "model": r.stringInto(&m.Model),
					"ttfat": r.floatInto(&m.TTFAT), "ttfb": r.floatInto(&m.TTFB), "thinking_time": r.floatInto(&m.ThinkingTime),
				}, "processor")
				d.TTFAT = append(d.TTFAT, m)
				return atIndex(err, i)
			})
		},
		"tokens": func() error {
			return r.readArray(func(i int) error {
				var u TokenUsage
				err := r.fields(map[string]func() error{
					"prompt_tokens":                 r.intInto(&u.PromptTokens),
					"completion_tokens":             r.intInto(&u.CompletionTokens),
					"total_tokens":                  r.intInto(&u.TotalTokens),
					"cache_read_input_tokens":       r.intInto(&u.CacheReadInputTokens),
					"cache_creation_input_tokens":   r.intInto(&u.CacheCreationInputTokens),
					"reasoning_tokens":              r.intInto(&u.ReasoningTokens),
					"input_audio_tokens":            r.intInto(&u.InputAudioTokens),
					"output_audio_tokens":           r.intInto(&u.OutputAudioTokens),
					"cache_read_input_audio_tokens": r.intInto(&u.CacheReadInputAudioTokens),
				})
				d.Tokens = append(d.Tokens, u)
				return atIndex(err, i)
			})
		},
		"stt_usage": func() error {
			return r.readArray(func(i int) error {
				var m STTUsageMetric
				err := r.fields(map[string]func() error{
					"processor": r.stringInto(&m.Processor), "model": r.stringInto(&m.Model),
					"value": func() error {
						return r.fields(map[string]func() error{"audio_seconds": r.floatInto(&m.AudioSeconds)})
					},
				}, "processor")
				d.STTUsage = append(d.STTUsage, m)
				return atIndex(err, i)
			})
		},
		"characters": func() error {
			return r.readArray(func(i int) error {
				var m CharactersMetric
				err := r.fields(map[string]func() error{
					"processor": r.stringInto(&m.Processor), "model": r.stringInto(&m.Model), "value": r.intInto(&m.Value),
				}, "processor", "value")
				d.Characters = append(d.Characters, m)
				return atIndex(err, i)
			})
		},
	})
}

func decodeSearchResponse(r *reader) (Payload, error) {
	d := &SearchResponse{}
	return d, r.fields(map[string]func() error{
		"search_result":    r.stringInto(&d.SearchResult),
		"rendered_content": r.stringInto(&d.RenderedContent),
		"origins": func() error {
			return r.readArray(func(i int) error {
				var o SearchOrigin
				err := r.fields(map[string]func() error{
					"site_uri":   r.stringInto(&o.SiteURI),
					"site_title": r.stringInto(&o.SiteTitle),
					"results": func() error {
						return r.readArray(func(j int) error {
							var res SearchResult
							err := r.fields(map[string]func() error{
								"text": r.stringInto(&res.Text),
								"confidence": func() error {
									return r.readArray(func(k int) error {
										var c float64
										err := r.floatInto(&c)()
										res.Confidence = append(res.Confidence, c)
										return atIndex(err, k)
									})
								},
							})
							o.Results = append(o.Results, res)
							return atIndex(err, j)
						})
					},
				})
				d.Origins = append(d.Origins, o)
				return atIndex(err, i)
			})
		},
	}, "origins")
}

func decodeTask(r *reader, v Vocabulary) (Payload, error) {
	sub, err := r.span()
	if err != nil {
		return nil, err
	}
	// Read the kind first: it decides the other members' names.
	var kind string
	err = sub.readObject(func(key []byte) error {
		if string(key) == "kind" {
			s, err := sub.readString()
			kind = s
			return at(err, "kind")
		}
		return sub.skip()
	})
	if err != nil {
		return nil, err
	}
	sub.i, sub.depth = 0, 0
	id, worker := v.idKey(), v.workerKey()
	d := &UITask{Vocabulary: v}
	switch kind {
	case KindGroupStarted:
		e := GroupStarted{}
		err = sub.fields(map[string]func() error{
			"kind": sub.skip, id: sub.stringInto(&e.TaskID), "label": sub.stringInto(&e.Label),
			"cancellable": sub.boolInto(&e.Cancellable), "at": sub.int64Into(&e.At),
			v.workersKey(): func() error {
				e.Agents = []string{}
				return sub.readArray(func(i int) error {
					s, err := sub.readString()
					e.Agents = append(e.Agents, s)
					return atIndex(err, i)
				})
			},
		}, id, v.workersKey(), "at")
		d.Event = e
	case TaskUpdate{}.Kind(v):
		e := TaskUpdate{}
		err = sub.fields(map[string]func() error{
			"kind": sub.skip, id: sub.stringInto(&e.TaskID), worker: sub.stringInto(&e.AgentName),
			"data": sub.payloadInto(&e.Data), "at": sub.int64Into(&e.At),
		}, id, worker, "at")
		d.Event = e
	case TaskCompleted{}.Kind(v):
		e := TaskCompleted{}
		var status string
		err = sub.fields(map[string]func() error{
			"kind": sub.skip, id: sub.stringInto(&e.TaskID), worker: sub.stringInto(&e.AgentName),
			"status": sub.stringInto(&status), "response": sub.payloadInto(&e.Response), "at": sub.int64Into(&e.At),
		}, id, worker, "status", "at")
		e.Status = TaskStatus(status)
		d.Event = e
	case KindGroupCompleted:
		e := GroupCompleted{}
		err = sub.fields(map[string]func() error{"kind": sub.skip, id: sub.stringInto(&e.TaskID), "at": sub.int64Into(&e.At)}, id, "at")
		d.Event = e
	default:
		return nil, &fieldError{path: []string{"kind"}, msg: "unknown kind " + quoteForError(kind) + " for " + v.MessageType()}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}
