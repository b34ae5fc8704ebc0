// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

using SafeMath for uint256;

interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
}

library SafeMath {
    function add(uint256 a, uint256 b) internal pure returns (uint256) {
        return a + b;
    }
}

error InsufficientBalance(uint256 available, uint256 required);

contract Token is IERC20 {
    mapping(address => uint256) private balances;

    event Transfer(address indexed from, address indexed to, uint256 value);

    modifier nonZero(uint256 amount) {
        require(amount > 0, "zero amount");
        _;
    }

    constructor(uint256 supply) {
        balances[msg.sender] = supply;
    }

    function transfer(address to, uint256 amount) external nonZero(amount) returns (bool) {
        if (balances[msg.sender] < amount) {
            revert InsufficientBalance(balances[msg.sender], amount);
        }
        balances[msg.sender] -= amount;
        balances[to] = balances[to].add(amount);
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}

struct Checkpoint {
    uint32 block;
    uint224 votes;
}

enum Phase { Setup, Live, Closed }
