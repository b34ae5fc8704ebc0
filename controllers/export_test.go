package controllers

import "sigs.k8s.io/controller-runtime/pkg/client"

// suiteClient is a client of the control plane the package's suite starts
// (TestMain in suite_test.go), for the package's own tests of single
// steps against the real API server.
var suiteClient client.Client

// UseSuiteClient hands the package's own tests the suite's client.
func UseSuiteClient(c client.Client) { suiteClient = c }
