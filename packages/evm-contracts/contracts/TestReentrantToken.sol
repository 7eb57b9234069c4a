// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title TestReentrantToken — a hostile token for the escrow's reentrancy test. NEVER deploy it anywhere real.
/// @notice Real USDC calls nobody back on a transfer, so an escrow of USDC cannot be re-entered
/// through the token. This token does: armed with `arm(target, data)`, its next `transfer` from
/// `target` calls `target` with `data` (e.g. `release(otherEscrowId)`) in the middle of the
/// payout, and records whether that call succeeded and what it reverted with.
/// `receiveWithAuthorization` checks no signature: anyone's funds move to the caller.
contract TestReentrantToken {
    mapping(address => uint256) public balanceOf;

    address public armedTarget;
    bytes public armedCall;
    bool public reentryAttempted;
    bool public reentrySucceeded;
    bytes public reentryError;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function arm(address target, bytes calldata data) external {
        armedTarget = target;
        armedCall = data;
    }

    function receiveWithAuthorization(address from, address to, uint256 value, uint256, uint256, bytes32, uint8, bytes32, bytes32) external {
        require(to == msg.sender, "caller must be the payee");
        _move(from, to, value);
    }

    function receiveWithAuthorization(address from, address to, uint256 value, uint256, uint256, bytes32, bytes calldata) external {
        require(to == msg.sender, "caller must be the payee");
        _move(from, to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        address target = armedTarget;
        if (target != address(0) && msg.sender == target) {
            armedTarget = address(0); // once
            reentryAttempted = true;
            (bool ok, bytes memory err) = target.call(armedCall);
            reentrySucceeded = ok;
            reentryError = err;
        }
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(balanceOf[from] >= value, "balance too low");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
