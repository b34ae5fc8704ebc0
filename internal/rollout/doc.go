// Package rollout decides whether a built revision may serve: Verify checks
// that an opened revision's stores agree with its manifest and with each
// other and that it answers queries, and EvaluateGate compares the hit rate
// of golden queries on the candidate with the active revision's. It imports
// nothing from Kubernetes; the controllers turn its results into status.
package rollout
