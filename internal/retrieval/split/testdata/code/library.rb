# A lending library: books, members and loans.
require 'date'

class Book
  attr_reader :isbn, :title

  def initialize(isbn, title)
    @isbn = isbn
    @title = title
  end
end

class Library
  LOAN_DAYS = 21

  def initialize
    @loans = {}
  end

  def lend(book, member, today = Date.today)
    if @loans.key?(book.isbn)
      raise ArgumentError, "#{book.title} is already out"
    end
    @loans[book.isbn] = [member, today + LOAN_DAYS]
  end

  def overdue(today = Date.today)
    @loans.select do |_isbn, (_member, due)|
      due < today
    end
  end
end

def fine_for(days)
  return 0 unless days.positive?
  begin
    [days * 0.25, 10.0].min
  rescue TypeError
    0
  end
end

while false
  puts 'never'
end
