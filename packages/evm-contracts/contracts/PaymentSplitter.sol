// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SignatureValidation} from "./SignatureValidation.sol";

/// @notice The EIP-3009 surface of USDC (FiatToken v2.2) that the split needs.
interface IEIP3009Token {
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool);

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;

    function DOMAIN_SEPARATOR() external view returns (bytes32);
}

/// @title PaySplit — the non-custodial `payTo` of one recipient set.
/// @notice The buyer signs one EIP-3009 `transferWithAuthorization` of the total to this contract.
/// `settle` pulls it (or, if someone already submitted it straight to the token, proves that it
/// was a genuine payment to this contract) and pays seller, platform and fee wallet exactly once
/// per (from, nonce), with amounts derived from the value alone by the rule of packages/money
/// (`priceFromTotal` then `breakdown`). No owner, no withdrawal, and no parameter of `settle`
/// that can send funds anywhere else.
contract PaySplit {
    using SafeERC20 for IERC20;

    uint256 public constant MAX_PLATFORM_BPS = 2000;
    uint256 private constant BPS = 10_000;

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)");

    address public immutable token;
    address public immutable seller;
    address public immutable platform;
    uint16 public immutable platformBps;
    address public immutable feeWallet;
    /// 0 = standard (0.5% + $0.01), 1 = escrow (1% + $0.02).
    uint8 public immutable feeRule;

    /// @notice True once the payment (from, nonce) has been split.
    mapping(address => mapping(bytes32 => bool)) public split;

    event Settled(address indexed from, bytes32 indexed nonce, uint256 value, uint256 providerAmount, uint256 platformAmount, uint256 feeAmount);

    constructor(address token_, address seller_, address platform_, uint16 platformBps_, address feeWallet_, uint8 feeRule_) {
        require(token_ != address(0), "PaySplit: token is zero");
        require(seller_ != address(0), "PaySplit: seller is zero");
        require(feeWallet_ != address(0), "PaySplit: fee wallet is zero");
        require(platformBps_ <= MAX_PLATFORM_BPS, "PaySplit: platform bps above 2000");
        require(platformBps_ == 0 || platform_ != address(0), "PaySplit: platform is zero");
        require(feeRule_ <= 1, "PaySplit: unknown fee rule");
        token = token_;
        seller = seller_;
        platform = platform_;
        platformBps = platformBps_;
        feeWallet = feeWallet_;
        feeRule = feeRule_;
    }

    /// @notice Splits the buyer's payment (from, nonce) of `value`. Anyone may call it: the buyer's
    /// signature fixes the payer, the amount and (through `to`) this contract's recipients.
    function settle(address from, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes calldata signature) external {
        require(!split[from][nonce], "PaySplit: already split");
        split[from][nonce] = true;

        if (!IEIP3009Token(token).authorizationState(from, nonce)) {
            IEIP3009Token(token).transferWithAuthorization(from, address(this), value, validAfter, validBefore, nonce, signature);
        } else {
            // Already executed (e.g. front-run straight to the token): accept it only if it was a
            // transfer of `value` from `from` to this very contract.
            bytes32 structHash = keccak256(abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, address(this), value, validAfter, validBefore, nonce));
            bytes32 digest = keccak256(abi.encodePacked("\x19\x01", IEIP3009Token(token).DOMAIN_SEPARATOR(), structHash));
            require(SignatureValidation.isValidNow(from, digest, signature), "PaySplit: invalid signature");
        }
        require(IERC20(token).balanceOf(address(this)) >= value, "PaySplit: insufficient balance");

        (uint256 providerAmount, uint256 platformAmount, uint256 feeAmount) = splitAmounts(value);
        IERC20(token).safeTransfer(seller, providerAmount);
        if (platformAmount > 0) IERC20(token).safeTransfer(platform, platformAmount);
        IERC20(token).safeTransfer(feeWallet, feeAmount);

        emit Settled(from, nonce, value, providerAmount, platformAmount, feeAmount);
    }

    /// @notice The split of a total `value`: price = priceFromTotal(value, rule), platform cut =
    /// price * bps / 10000 (rounded down), provider = price - platform cut, fee = value - price.
    function splitAmounts(uint256 value) public view returns (uint256 providerAmount, uint256 platformAmount, uint256 feeAmount) {
        (uint256 k, uint256 flat) = feeRule == 0 ? (uint256(200), uint256(10_000)) : (uint256(100), uint256(20_000));
        require(value > flat, "PaySplit: value does not cover the flat fee");
        uint256 rest = value - flat;
        uint256 price = rest - rest / (k + 1);
        platformAmount = (price * platformBps) / BPS;
        providerAmount = price - platformAmount;
        feeAmount = value - price;
    }
}
