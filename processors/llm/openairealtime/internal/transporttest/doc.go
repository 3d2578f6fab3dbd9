// Package transporttest gives the tests of the OpenAI Realtime service
// (processors/llm/openairealtime) and of its UI agent
// (openairealtime/realtimeui) one stand-in for the output transport, so
// that both drive the RTVI observer's spoken-text path the way a real
// transport does without running one. It is for tests only.
package transporttest
