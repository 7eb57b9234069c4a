// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall3 — a small implementation with the canonical Multicall3 interface.
/// @notice Written for the devchain, where it is placed with `hardhat_setCode` at the canonical
/// address (no constructor, no storage). Function signatures, struct layouts and return shapes
/// are those of the widely deployed Multicall3, so viem's `multicall` (which uses `aggregate3`)
/// and other clients work against it unchanged.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Call3Value {
        address target;
        bool allowFailure;
        uint256 value;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Runs every call; any failure reverts the whole batch.
    function aggregate(Call[] calldata calls) public payable returns (uint256 blockNumber, bytes[] memory returnData) {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok, bytes memory ret) = calls[i].target.call(calls[i].callData);
            require(ok, "Multicall3: call failed");
            returnData[i] = ret;
        }
    }

    /// @notice Runs every call; a failure reverts the batch only when `requireSuccess` is set.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(ok, "Multicall3: call failed");
            returnData[i] = Result(ok, ret);
        }
    }

    function tryBlockAndAggregate(
        bool requireSuccess,
        Call[] calldata calls
    ) public payable returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData) {
        blockNumber = block.number;
        blockHash = blockhash(block.number);
        returnData = tryAggregate(requireSuccess, calls);
    }

    function blockAndAggregate(Call[] calldata calls) public payable returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData) {
        (blockNumber, blockHash, returnData) = tryBlockAndAggregate(true, calls);
    }

    /// @notice Runs every call; each one's failure is tolerated only where it allows failure.
    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call3 calldata c = calls[i];
            (bool ok, bytes memory ret) = c.target.call(c.callData);
            require(ok || c.allowFailure, "Multicall3: call failed");
            returnData[i] = Result(ok, ret);
        }
    }

    /// @notice Like `aggregate3`, forwarding a value with each call; the values must add up to msg.value.
    function aggregate3Value(Call3Value[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        uint256 total = 0;
        for (uint256 i = 0; i < calls.length; ++i) {
            Call3Value calldata c = calls[i];
            total += c.value;
            (bool ok, bytes memory ret) = c.target.call{value: c.value}(c.callData);
            require(ok || c.allowFailure, "Multicall3: call failed");
            returnData[i] = Result(ok, ret);
        }
        require(total == msg.value, "Multicall3: value mismatch");
    }

    function getBlockHash(uint256 blockNumber) public view returns (bytes32 blockHash) {
        blockHash = blockhash(blockNumber);
    }

    function getBlockNumber() public view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }

    function getCurrentBlockCoinbase() public view returns (address coinbase) {
        coinbase = block.coinbase;
    }

    function getCurrentBlockDifficulty() public view returns (uint256 difficulty) {
        difficulty = block.prevrandao;
    }

    function getCurrentBlockGasLimit() public view returns (uint256 gaslimit) {
        gaslimit = block.gaslimit;
    }

    function getCurrentBlockTimestamp() public view returns (uint256 timestamp) {
        timestamp = block.timestamp;
    }

    function getEthBalance(address addr) public view returns (uint256 balance) {
        balance = addr.balance;
    }

    function getLastBlockHash() public view returns (bytes32 blockHash) {
        unchecked {
            blockHash = blockhash(block.number - 1);
        }
    }

    function getBasefee() public view returns (uint256 basefee) {
        basefee = block.basefee;
    }

    function getChainId() public view returns (uint256 chainid) {
        chainid = block.chainid;
    }
}
