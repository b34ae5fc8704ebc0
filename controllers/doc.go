// Package controllers holds one reconciler per parentrag kind. Reconcilers
// call the retrieval core through small interfaces and hold no retrieval
// logic of their own.
package controllers
