# Summary statistics with a small S4 class.
library(stats)
require(utils)

setClass("Sample", representation(values = "numeric", label = "character"))

setGeneric("describe", function(x, ...) standardGeneric("describe"))

setMethod("describe", "Sample", function(x, ...) {
  cat(x@label, ": mean", mean(x@values), "sd", sd(x@values), "\n")
})

trimmed <- function(v, p = 0.1) {
  if (length(v) == 0) {
    return(NA)
  }
  mean(v, trim = p)
}

for (i in 1:3) {
  s <- new("Sample", values = rnorm(10), label = paste("run", i))
  describe(s)
}
