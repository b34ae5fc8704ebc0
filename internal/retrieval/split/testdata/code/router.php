<?php
// A tiny router matching paths to handlers.

class Router
{
    private $routes = [];

    public function add($method, $path, callable $handler)
    {
        $this->routes[$method][$path] = $handler;
    }

    public function dispatch($method, $path)
    {
        if (!isset($this->routes[$method][$path])) {
            http_response_code(404);
            return 'not found';
        }
        return call_user_func($this->routes[$method][$path]);
    }
}

function routes_list(Router $r)
{
    $out = [];
    foreach ($r as $k => $v) {
        $out[] = $k;
    }
    return $out;
}

switch (PHP_SAPI) {
    case 'cli':
        echo "run me behind a web server\n";
        break;
}
