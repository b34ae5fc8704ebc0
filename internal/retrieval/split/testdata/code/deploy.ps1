# Copies a build to a server and restarts the service.
param (
    [string]$Server = "localhost",
    [string]$Path = ".\build"
)

function Copy-Build {
    param ([string]$Target)
    if (-not (Test-Path $Path)) {
        throw "no build at $Path"
    }
    Copy-Item -Recurse $Path "\\$Target\deploy"
}

class Release {
    [string]$Version
    Release([string]$v) { $this.Version = $v }
}

try {
    Copy-Build -Target $Server
}
catch {
    Write-Error $_
}
finally {
    Write-Host "done"
}

foreach ($svc in @("web", "worker")) {
    switch ($svc) {
        "web" { Restart-Service $svc }
        default { Write-Host "skip $svc" }
    }
}
