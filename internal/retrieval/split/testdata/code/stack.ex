defmodule Stack do
  @moduledoc "A stack kept in an agent."
  use Agent

  def start_link(items \\ []) do
    Agent.start_link(fn -> items end, name: __MODULE__)
  end

  def push(item) do
    Agent.update(__MODULE__, &[item | &1])
  end

  def pop do
    Agent.get_and_update(__MODULE__, fn
      [] -> {nil, []}
      [h | t] -> {h, t}
    end)
  end

  defp size(items), do: length(items)

  defmacro debug(expr) do
    quote do
      IO.inspect(unquote(expr))
    end
  end
end

defprotocol Sized do
  def size(data)
end
