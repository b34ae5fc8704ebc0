// Package monitoring checks the dashboard and alert rules of
// config/monitoring against the metrics parentrag exports. It is a module
// of its own so that the Prometheus module it uses (the PromQL parser and
// promtool) does not choose the versions of parentrag's dependencies.
package monitoring
