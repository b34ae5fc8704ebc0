package hello

object Greeter {
  val Default = "world"

  def greet(name: String): String =
    name match {
      case "" => s"Hello, $Default"
      case n  => s"Hello, $n"
    }
}

class Counter(start: Int) {
  var count = start
  def inc(): Unit = { count += 1 }
}
