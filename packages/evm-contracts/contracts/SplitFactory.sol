// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PaySplit} from "./PaymentSplitter.sol";

/// @title SplitFactory — deterministic (CREATE2) PaySplit addresses, one per recipient set.
/// @notice No owner. The address of a split is a pure function of this factory's address and the
/// recipient set: salt = keccak256(abi.encode(token, seller, platform, platformBps, feeWallet,
/// feeRule)), init code = PaySplit creation code ++ abi.encode(same args).
contract SplitFactory {
    event SplitDeployed(address indexed split, address indexed token, address indexed seller, address platform, uint16 platformBps, address feeWallet, uint8 feeRule);

    /// @notice The address the split of this recipient set has (or will have once deployed).
    function splitAddress(address token, address seller, address platform, uint16 platformBps, address feeWallet, uint8 feeRule) public view returns (address) {
        _validate(token, seller, platform, platformBps, feeWallet, feeRule);
        bytes memory args = abi.encode(token, seller, platform, platformBps, feeWallet, feeRule);
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(PaySplit).creationCode, args));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), keccak256(args), initCodeHash)))));
    }

    /// @notice Deploys the split of this recipient set unless it already exists; returns its address.
    function deploy(address token, address seller, address platform, uint16 platformBps, address feeWallet, uint8 feeRule) public returns (address split) {
        split = splitAddress(token, seller, platform, platformBps, feeWallet, feeRule);
        if (split.code.length == 0) {
            bytes32 salt = keccak256(abi.encode(token, seller, platform, platformBps, feeWallet, feeRule));
            address deployed = address(new PaySplit{salt: salt}(token, seller, platform, platformBps, feeWallet, feeRule));
            require(deployed == split, "SplitFactory: address mismatch");
            emit SplitDeployed(split, token, seller, platform, platformBps, feeWallet, feeRule);
        }
    }

    /// @notice Deploy-if-needed, then `PaySplit.settle`: one transaction for the service.
    function settle(
        address token,
        address seller,
        address platform,
        uint16 platformBps,
        address feeWallet,
        uint8 feeRule,
        address from,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external returns (address split) {
        split = deploy(token, seller, platform, platformBps, feeWallet, feeRule);
        PaySplit(split).settle(from, value, validAfter, validBefore, nonce, signature);
    }

    /// @notice One payment for `settleEach`: its recipient set and the buyer's authorization, as `settle` takes them.
    struct Settlement {
        address seller;
        address platform;
        uint16 platformBps;
        address feeWallet;
        uint8 feeRule;
        address from;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        bytes signature;
    }

    /// @notice The gas each payment of `settleEach` may use for its split's `settle` (the split's
    /// deployment is paid apart): a plain payment needs about a third of it, a contract wallet's
    /// signature check the rest.
    uint256 public constant SETTLE_GAS_PER_PAYMENT = 500_000;

    /// @notice `settle` for each payment in one transaction: many payments cost the service one
    /// transaction, one nonce and one receipt. A payment that cannot settle (its funds moved, its
    /// authorization used or expired, its wallet refusing or using more than SETTLE_GAS_PER_PAYMENT)
    /// is skipped and changes nothing, while the others settle: each one's outcome is its own
    /// `Settled` event. Each payment is given its full allowance or the transaction reverts, so no
    /// payment can starve the others of gas, and a gas estimate of this call covers every payment.
    function settleEach(address token, Settlement[] calldata settlements) external {
        for (uint256 i = 0; i < settlements.length; i++) {
            Settlement calldata s = settlements[i];
            address split = deploy(token, s.seller, s.platform, s.platformBps, s.feeWallet, s.feeRule);
            // EIP-150 keeps 1/64 of the gas back from a call: ask for enough that the call gets it all.
            require(gasleft() > (SETTLE_GAS_PER_PAYMENT * 64) / 63 + 10_000, "SplitFactory: out of gas");
            try PaySplit(split).settle{gas: SETTLE_GAS_PER_PAYMENT}(s.from, s.value, s.validAfter, s.validBefore, s.nonce, s.signature) {} catch {}
        }
    }

    function _validate(address token, address seller, address platform, uint16 platformBps, address feeWallet, uint8 feeRule) private pure {
        require(token != address(0), "SplitFactory: token is zero");
        require(seller != address(0), "SplitFactory: seller is zero");
        require(feeWallet != address(0), "SplitFactory: fee wallet is zero");
        require(platformBps <= 2000, "SplitFactory: platform bps above 2000");
        require(platformBps == 0 || platform != address(0), "SplitFactory: platform is zero");
        require(feeRule <= 1, "SplitFactory: unknown fee rule");
    }
}
