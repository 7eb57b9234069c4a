// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";

/// @notice A contract wallet for tests (devchain only) whose signature check burns every unit of gas
/// it is given: a payment from it can never settle, and in a `settleEach` it would starve the
/// payments after it, which the factory refuses by reverting the whole transaction.
contract TestGasBurningWallet is IERC1271 {
    function isValidSignature(bytes32 digest, bytes calldata) external view returns (bytes4) {
        uint256 spin = uint256(digest);
        while (gasleft() > 0) spin = uint256(keccak256(abi.encode(spin)));
        return bytes4(bytes32(spin));
    }
}
