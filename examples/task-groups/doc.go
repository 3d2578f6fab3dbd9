// Command task-groups shows task groups (processors/uiagent): long-running
// server-side work split over named workers that report progress to the
// page while the conversation goes on, and that the user can cancel.
//
// It runs a pipeline with an RTVI processor and uiagent.TaskGroups, plays
// the browser's part (client-ready, then a cancel request), and prints the
// ui-job-group messages the page would receive: group_started, the workers'
// job_update messages, one job_completed per worker (completed, failed, or
// cancelled) and group_completed. The ui-agent demo (`make run`) shows the
// same messages as cards with a Cancel button.
//
//	go run ./examples/task-groups [-speed 4]
package main
