using System;
using System.Collections.Generic;

namespace Shop.Orders
{
    public enum Status { Open, Paid, Shipped }

    public interface IClock { DateTime Now { get; } }

    public class Order
    {
        private readonly List<decimal> _lines = new List<decimal>();

        public Status Status { get; private set; } = Status.Open;

        public void AddLine(decimal amount)
        {
            if (Status != Status.Open)
            {
                throw new InvalidOperationException("order is closed");
            }
            _lines.Add(amount);
        }

        public decimal Total()
        {
            decimal sum = 0;
            foreach (var l in _lines)
            {
                sum += l;
            }
            return sum;
        }

        protected static string Label(Status s)
        {
            switch (s)
            {
                case Status.Paid:
                    return "paid";
                default:
                    return s.ToString().ToLowerInvariant();
            }
        }
    }
}
