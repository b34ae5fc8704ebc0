// Shopping cart: lines, totals and a discount rule.
'use strict';

const TAX_RATE = 0.2;
let nextId = 1;

class Cart {
  constructor(currency = 'EUR') {
    this.currency = currency;
    this.lines = [];
  }

  add(sku, price, quantity = 1) {
    if (quantity <= 0) {
      throw new RangeError(`quantity must be positive, got ${quantity}`);
    }
    const line = { id: nextId++, sku, price, quantity };
    this.lines.push(line);
    return line.id;
  }

  remove(id) {
    this.lines = this.lines.filter((line) => line.id !== id);
  }

  subtotal() {
    let sum = 0;
    for (const line of this.lines) {
      sum += line.price * line.quantity;
    }
    return sum;
  }
}

function discount(cart, code) {
  switch (code) {
    case 'TEN':
      return cart.subtotal() * 0.1;
    case 'BULK':
      return cart.lines.length >= 10 ? 25 : 0;
    default:
      return 0;
  }
}

var total = function (cart, code) {
  const net = cart.subtotal() - discount(cart, code);
  return Math.round(net * (1 + TAX_RATE) * 100) / 100;
};

if (typeof module !== 'undefined') {
  module.exports = { Cart, discount, total };
}
