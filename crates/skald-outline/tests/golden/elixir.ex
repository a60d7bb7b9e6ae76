defmodule MyApp.User do
  @moduledoc "x"
  defstruct [:name]
  def new(name) do
    %__MODULE__{name: name}
  end
  defp helper(x) when is_integer(x), do: x
  defmacro m(a), do: a
end
defprotocol Size do
  def size(data)
end
