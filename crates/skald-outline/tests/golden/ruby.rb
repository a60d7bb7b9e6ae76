module Foo
  class Bar < Base
    def greet(x); end
    def self.make; end
  end
end
def top; end
