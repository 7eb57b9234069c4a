// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @notice The part of USDC (FiatToken v2.2, EIP-3009) the escrow uses.
interface IUSDCReceiveWithAuthorization {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @title C402Escrow — every c402 escrow on one chain, in one contract.
/// @notice A buyer's payment is held here under terms fixed at deposit, and leaves only to the
/// seller (with the platform's cut and the protocol fee) or back to the buyer, in full. There is
/// no owner, no admin, no pause and no withdraw: the only ways out are the transitions below.
///
/// Terms and deposit. The terms (`EscrowTerms`) are an EIP-712 struct of this contract's domain
/// ("c402 Escrow", "1", chain id, this address). The escrow id is their full EIP-712 digest, and it
/// is the nonce of the buyer's EIP-3009 `ReceiveWithAuthorization` of amount + platformAmount + fee
/// to this contract: a `receiveWithAuthorization` only the payee (this contract) can execute, so the
/// buyer's one signature commits to the terms, and a deposit under any other terms, or a plain
/// transfer from the same signature, is impossible.
///
/// States (ids as in the `State` enum):
///   Held      --approve (buyer)-------------------------------> Released
///   Held      --release (anyone), now >= releaseAt -------------> Released
///   Held      --hold (buyer), now < releaseAt ------------------> OnHold
///   OnHold    --release (anyone), now >= releaseAt -------------> Released
///   Held|OnHold --requestRefund (buyer), now < releaseAt -------> Escalated
///   Held|OnHold --cancel (seller) -----------------------------> Refunded
///   Escalated --rule(toSeller) (arbiter), now < backstopAt -----> Released | Refunded
///   Escalated --refund (anyone), now >= backstopAt -------------> Refunded
/// where releaseAt = depositedAt + settleWindow while Held, and
/// max(depositedAt + settleWindow, heldAt + holdWindow) while OnHold (a hold pauses the automatic
/// release for the hold window and never brings it forward), and backstopAt = escalatedAt +
/// backstopWindow. At each of those instants the timed exit opens and the buyer's hold and dispute
/// (at releaseAt) or the arbiter's ruling (at backstopAt) close, so a timed exit never races them.
/// Released and Refunded are final.
///
/// Released pays the seller `amount`, the platform `platformAmount` and `feeTo` the `fee`;
/// Refunded pays the buyer everything deposited, fee included.
///
/// The buyer's actions (hold, approve, requestRefund) and the seller's cancel are taken either by
/// that wallet itself (msg.sender) or by anyone presenting its EIP-712 `EscrowAction` signature
/// (`submitAction`), which names the escrow, the action, the escrow's action nonce (incremented by
/// every action) and a deadline. The arbiter rules from its own wallet only.
///
/// Placement: no immutables, so it can be placed at a fixed address with `hardhat_setCode`
/// and set up with `initialize(usdc)`; a real deployment passes the token to the constructor, which
/// leaves nothing to initialize (and so no initialization anyone could front-run).
contract C402Escrow is ReentrancyGuard {
    using SafeERC20 for IERC20;

    // ---------------------------------------------------------------- types

    enum State {
        None,
        Held,
        OnHold,
        Escalated,
        Released,
        Refunded
    }

    /// @notice Why an escrow was released or refunded.
    enum Cause {
        Approved, // the buyer approved (Released)
        SettleWindowEnded, // the automatic release after the settle window or the hold (Released)
        Ruling, // the arbiter ruled (Released or Refunded)
        Cancelled, // the seller cancelled (Refunded)
        Backstop // the arbiter did not rule within the backstop window (Refunded)
    }

    /// @notice The timed exit of an escrow's current state: Release (Held, OnHold), Refund (Escalated), None (otherwise).
    enum TimedExit {
        None,
        Release,
        Refund
    }

    /// @notice The terms the buyer's deposit signature commits to (see the contract notice).
    struct EscrowTerms {
        address buyer;
        address seller;
        address platform; // address(0) when none
        address feeTo;
        address arbiter;
        uint256 amount; // the seller's share
        uint256 platformAmount;
        uint256 fee;
        uint64 settleWindow; // seconds
        uint64 holdWindow; // seconds
        uint64 backstopWindow; // seconds
        uint8 preset; // 0 instant, 1 standard, 2 shipping, 3 custom: a label, the windows are what count
        bytes32 salt;
    }

    /// @notice An escrow as stored (and as `escrows` returns it). Timestamps are unix seconds, 0 when not reached.
    struct Escrow {
        address buyer;
        State state;
        uint8 preset;
        uint64 depositedAt;
        address seller;
        uint64 heldAt;
        address platform;
        uint64 escalatedAt;
        address feeTo;
        uint64 settleWindow;
        address arbiter;
        uint64 holdWindow;
        uint64 backstopWindow;
        uint64 nonce;
        uint256 amount;
        uint256 platformAmount;
        uint256 fee;
    }

    // ---------------------------------------------------------------- constants

    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant EIP712_DOMAIN_TYPEHASH = 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    bytes32 private constant NAME_HASH = keccak256("c402 Escrow");
    bytes32 private constant VERSION_HASH = keccak256("1");

    bytes32 public constant ESCROW_TERMS_TYPEHASH =
        keccak256(
            "EscrowTerms(address buyer,address seller,address platform,address feeTo,address arbiter,uint256 amount,uint256 platformAmount,uint256 fee,uint64 settleWindow,uint64 holdWindow,uint64 backstopWindow,uint8 preset,bytes32 salt)"
        );
    bytes32 public constant ESCROW_ACTION_TYPEHASH = keccak256("EscrowAction(bytes32 escrowId,uint8 action,uint256 nonce,uint256 deadline)");

    /// @notice Action ids of `EscrowAction` and `submitAction` (0 is no action).
    uint8 public constant ACTION_HOLD = 1;
    uint8 public constant ACTION_APPROVE = 2;
    uint8 public constant ACTION_REQUEST_REFUND = 3;
    uint8 public constant ACTION_CANCEL = 4;

    uint64 public constant MIN_WINDOW = 1 hours;
    uint64 public constant MAX_SETTLE_WINDOW = 30 days;
    uint64 public constant MAX_HOLD_WINDOW = 30 days;
    uint64 public constant MAX_BACKSTOP_WINDOW = 180 days;
    uint8 public constant MAX_PRESET = 3;

    // ---------------------------------------------------------------- storage

    address private _usdc;
    mapping(bytes32 => Escrow) private _escrows;

    // ---------------------------------------------------------------- events

    event Initialized(address indexed usdc);
    event Deposited(bytes32 indexed escrowId, address indexed buyer, address indexed seller, uint256 total, EscrowTerms terms);
    event OnHold(bytes32 indexed escrowId, uint64 heldAt, uint64 releaseAt);
    event Escalated(bytes32 indexed escrowId, address indexed arbiter, uint64 escalatedAt, uint64 backstopAt);
    event Released(
        bytes32 indexed escrowId,
        Cause cause,
        address seller,
        uint256 amount,
        address platform,
        uint256 platformAmount,
        address feeTo,
        uint256 fee
    );
    event Refunded(bytes32 indexed escrowId, Cause cause, address buyer, uint256 amount);

    // ---------------------------------------------------------------- errors

    error AlreadyInitialized();
    error NotInitialized();
    error ZeroToken();
    /// @notice The terms break a rule; `reason` says which (the TypeScript `escrowTermsProblem` gives the same words).
    error InvalidTerms(string reason);
    error EscrowExists(bytes32 escrowId);
    error DepositMismatch(uint256 expected, uint256 received);
    error UnknownEscrow(bytes32 escrowId);
    error UnknownAction(uint8 action);
    error WrongState(State state);
    error Unauthorized(address account);
    /// @notice The move's time has not come: it is possible from `opensAt` on.
    error TooEarly(uint64 opensAt);
    /// @notice The move's time is over: it was possible until just before `closedAt`.
    error TooLate(uint64 closedAt);
    error SignatureExpired(uint256 deadline);

    // ---------------------------------------------------------------- setup

    /// @param usdc_ The token (USDC). A real deployment passes it here; address(0) is refused, so a
    /// deployed contract is never left for someone else to initialize.
    constructor(address usdc_) {
        if (usdc_ == address(0)) revert ZeroToken();
        _usdc = usdc_;
        emit Initialized(usdc_);
    }

    /// @notice Sets the token of a contract placed without its constructor (`hardhat_setCode`). Callable once.
    function initialize(address usdc_) external nonReentrant {
        if (_usdc != address(0)) revert AlreadyInitialized();
        if (usdc_ == address(0)) revert ZeroToken();
        _usdc = usdc_;
        emit Initialized(usdc_);
    }

    function usdc() external view returns (address) {
        return _usdc;
    }

    // ---------------------------------------------------------------- EIP-712

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(EIP712_DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice ERC-5267: the EIP-712 domain (name, version, chain id, this contract).
    function eip712Domain()
        external
        view
        returns (bytes1 fields, string memory name, string memory version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] memory extensions)
    {
        return (hex"0f", "c402 Escrow", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    /// @notice The EIP-712 struct hash of the terms.
    function hashTerms(EscrowTerms calldata terms) public pure returns (bytes32) {
        return keccak256(abi.encode(ESCROW_TERMS_TYPEHASH, terms));
    }

    /// @notice The escrow id of the terms: their EIP-712 digest in this contract's domain, the nonce of the deposit's authorization.
    function escrowId(EscrowTerms calldata terms) public view returns (bytes32) {
        return _digest(hashTerms(terms));
    }

    /// @notice The digest an `EscrowAction` signature signs.
    function actionDigest(bytes32 id, uint8 action, uint256 nonce, uint256 deadline) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(ESCROW_ACTION_TYPEHASH, id, action, nonce, deadline)));
    }

    // ---------------------------------------------------------------- views

    /// @notice The escrow (State.None and zeros when there is none).
    function escrows(bytes32 id) external view returns (Escrow memory) {
        return _escrows[id];
    }

    /// @notice The action nonce an `EscrowAction` signature must name now.
    function nonces(bytes32 id) external view returns (uint256) {
        return _escrows[id].nonce;
    }

    /// @notice The timed exit of the escrow's current state, when it opens, and whether it is open now:
    /// `release(id)` (exit Release) or `refund(id)` (exit Refund) succeeds exactly when `due`.
    function timedExit(bytes32 id) external view returns (TimedExit exit, uint64 opensAt, bool due) {
        Escrow storage e = _escrows[id];
        State s = e.state;
        if (s == State.Held || s == State.OnHold) exit = TimedExit.Release;
        else if (s == State.Escalated) exit = TimedExit.Refund;
        else return (TimedExit.None, 0, false);
        opensAt = _deadline(e);
        due = block.timestamp >= opensAt;
    }

    // ---------------------------------------------------------------- deposit

    /// @notice Opens an escrow with the buyer's EIP-3009 `ReceiveWithAuthorization` of the terms' total
    /// to this contract, whose nonce is `escrowId(terms)`. Anyone may submit it.
    function deposit(EscrowTerms calldata terms, uint256 validAfter, uint256 validBefore, uint8 v, bytes32 r, bytes32 s) external nonReentrant returns (bytes32 id) {
        uint256 total;
        address token;
        (id, total, token) = _open(terms);
        uint256 before = IERC20(token).balanceOf(address(this));
        IUSDCReceiveWithAuthorization(token).receiveWithAuthorization(terms.buyer, address(this), total, validAfter, validBefore, id, v, r, s);
        _checkReceived(token, before, total);
    }

    /// @notice `deposit` with the authorization's signature as bytes (FiatToken v2.2): a smart-wallet
    /// buyer's EIP-1271 signature as well as an EOA's 65 bytes.
    function depositWithSignature(EscrowTerms calldata terms, uint256 validAfter, uint256 validBefore, bytes calldata signature) external nonReentrant returns (bytes32 id) {
        uint256 total;
        address token;
        (id, total, token) = _open(terms);
        uint256 before = IERC20(token).balanceOf(address(this));
        IUSDCReceiveWithAuthorization(token).receiveWithAuthorization(terms.buyer, address(this), total, validAfter, validBefore, id, signature);
        _checkReceived(token, before, total);
    }

    // ---------------------------------------------------------------- buyer and seller actions

    /// @notice The buyer pauses the automatic release (Held -> OnHold).
    function hold(bytes32 id) external nonReentrant {
        _act(id, ACTION_HOLD, msg.sender);
    }

    /// @notice The buyer releases the payment to the seller (Held -> Released).
    function approve(bytes32 id) external nonReentrant {
        _act(id, ACTION_APPROVE, msg.sender);
    }

    /// @notice The buyer disputes and asks the arbiter for a refund (Held|OnHold -> Escalated).
    function requestRefund(bytes32 id) external nonReentrant {
        _act(id, ACTION_REQUEST_REFUND, msg.sender);
    }

    /// @notice The seller concedes and refunds the buyer in full (Held|OnHold -> Refunded).
    function cancel(bytes32 id) external nonReentrant {
        _act(id, ACTION_CANCEL, msg.sender);
    }

    /// @notice Any of the four actions, by anyone holding the acting wallet's `EscrowAction` signature
    /// (the buyer's for hold, approve and requestRefund; the seller's for cancel) over the escrow's
    /// current action nonce, before `deadline` has passed.
    function submitAction(bytes32 id, uint8 action, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external nonReentrant {
        if (action == 0 || action > ACTION_CANCEL) revert UnknownAction(action);
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        Escrow storage e = _escrows[id];
        if (e.state == State.None) revert UnknownEscrow(id);
        // ECDSA.recover refuses high-s (malleable) signatures and v other than 27/28.
        address signer = ECDSA.recover(actionDigest(id, action, e.nonce, deadline), v, r, s);
        _act(id, action, signer);
    }

    // ---------------------------------------------------------------- arbiter and timed exits

    /// @notice The arbiter's ruling on a dispute, from the arbiter's own wallet, before the backstop:
    /// to the seller (Released) or back to the buyer (Refunded).
    function rule(bytes32 id, bool toSeller) external nonReentrant {
        Escrow storage e = _existing(id);
        if (msg.sender != e.arbiter) revert Unauthorized(msg.sender);
        if (e.state != State.Escalated) revert WrongState(e.state);
        uint64 boundary = _deadline(e);
        if (block.timestamp >= boundary) revert TooLate(boundary);
        if (toSeller) _release(id, e, Cause.Ruling);
        else _refund(id, e, Cause.Ruling);
    }

    /// @notice The automatic release once the settle window (or a hold) has ended. Anyone may call it.
    function release(bytes32 id) external nonReentrant {
        Escrow storage e = _existing(id);
        if (e.state != State.Held && e.state != State.OnHold) revert WrongState(e.state);
        uint64 boundary = _deadline(e);
        if (block.timestamp < boundary) revert TooEarly(boundary);
        _release(id, e, Cause.SettleWindowEnded);
    }

    /// @notice The automatic refund of a dispute the arbiter left unresolved for the backstop window. Anyone may call it.
    function refund(bytes32 id) external nonReentrant {
        Escrow storage e = _existing(id);
        if (e.state != State.Escalated) revert WrongState(e.state);
        uint64 boundary = _deadline(e);
        if (block.timestamp < boundary) revert TooEarly(boundary);
        _refund(id, e, Cause.Backstop);
    }

    // ---------------------------------------------------------------- internals

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    function _existing(bytes32 id) private view returns (Escrow storage e) {
        e = _escrows[id];
        if (e.state == State.None) revert UnknownEscrow(id);
    }

    /// @dev When the current state's timed exit opens (and the competing moves close).
    function _deadline(Escrow storage e) private view returns (uint64) {
        State s = e.state;
        if (s == State.Escalated) return e.escalatedAt + e.backstopWindow;
        uint64 releaseAt = e.depositedAt + e.settleWindow;
        if (s == State.OnHold) {
            uint64 afterHold = e.heldAt + e.holdWindow;
            if (afterHold > releaseAt) releaseAt = afterHold;
        }
        return releaseAt;
    }

    function _validate(EscrowTerms calldata t) private pure {
        if (t.amount == 0) revert InvalidTerms("amount is zero");
        if (t.buyer == address(0)) revert InvalidTerms("buyer is zero");
        if (t.seller == address(0)) revert InvalidTerms("seller is zero");
        if (t.seller == t.buyer) revert InvalidTerms("seller is the buyer");
        if (t.arbiter == address(0)) revert InvalidTerms("arbiter is zero");
        if (t.arbiter == t.buyer) revert InvalidTerms("arbiter is the buyer");
        if (t.arbiter == t.seller) revert InvalidTerms("arbiter is the seller");
        if (t.platformAmount != 0 && t.platform == address(0)) revert InvalidTerms("platform is zero");
        if (t.fee != 0 && t.feeTo == address(0)) revert InvalidTerms("fee wallet is zero");
        if (t.preset > MAX_PRESET) revert InvalidTerms("unknown preset");
        if (t.settleWindow < MIN_WINDOW || t.settleWindow > MAX_SETTLE_WINDOW) revert InvalidTerms("settle window out of bounds");
        if (t.holdWindow < MIN_WINDOW || t.holdWindow > MAX_HOLD_WINDOW) revert InvalidTerms("hold window out of bounds");
        if (t.backstopWindow < MIN_WINDOW || t.backstopWindow > MAX_BACKSTOP_WINDOW) revert InvalidTerms("backstop window out of bounds");
        if (t.backstopWindow <= t.holdWindow) revert InvalidTerms("backstop window not above hold window");
    }

    /// @dev Checks the terms and records the escrow (before the token is called: checks-effects-interactions).
    function _open(EscrowTerms calldata t) private returns (bytes32 id, uint256 total, address token) {
        token = _usdc;
        if (token == address(0)) revert NotInitialized();
        _validate(t);
        total = t.amount + t.platformAmount + t.fee; // reverts on overflow
        id = escrowId(t);
        Escrow storage e = _escrows[id];
        if (e.state != State.None) revert EscrowExists(id);
        e.buyer = t.buyer;
        e.state = State.Held;
        e.preset = t.preset;
        e.depositedAt = uint64(block.timestamp);
        e.seller = t.seller;
        e.platform = t.platform;
        e.feeTo = t.feeTo;
        e.settleWindow = t.settleWindow;
        e.arbiter = t.arbiter;
        e.holdWindow = t.holdWindow;
        e.backstopWindow = t.backstopWindow;
        e.amount = t.amount;
        e.platformAmount = t.platformAmount;
        e.fee = t.fee;
        emit Deposited(id, t.buyer, t.seller, total, t);
    }

    function _checkReceived(address token, uint256 before, uint256 total) private view {
        uint256 received = IERC20(token).balanceOf(address(this)) - before;
        if (received != total) revert DepositMismatch(total, received);
    }

    /// @dev A buyer or seller action by `actor` (the caller, or the signer of a submitted action).
    function _act(bytes32 id, uint8 action, address actor) private {
        Escrow storage e = _existing(id);
        address party = action == ACTION_CANCEL ? e.seller : e.buyer;
        if (actor != party) revert Unauthorized(actor);
        State s = e.state;
        e.nonce += 1;
        if (action == ACTION_APPROVE) {
            if (s != State.Held) revert WrongState(s);
            _release(id, e, Cause.Approved);
        } else if (action == ACTION_CANCEL) {
            if (s != State.Held && s != State.OnHold) revert WrongState(s);
            _refund(id, e, Cause.Cancelled);
        } else {
            // hold and requestRefund: only before the automatic release opens
            if (action == ACTION_HOLD ? s != State.Held : (s != State.Held && s != State.OnHold)) revert WrongState(s);
            uint64 boundary = _deadline(e);
            if (block.timestamp >= boundary) revert TooLate(boundary);
            uint64 nowTs = uint64(block.timestamp);
            if (action == ACTION_HOLD) {
                e.state = State.OnHold;
                e.heldAt = nowTs;
                emit OnHold(id, nowTs, _deadline(e));
            } else {
                e.state = State.Escalated;
                e.escalatedAt = nowTs;
                emit Escalated(id, e.arbiter, nowTs, _deadline(e));
            }
        }
    }

    function _release(bytes32 id, Escrow storage e, Cause cause) private {
        e.state = State.Released;
        address seller = e.seller;
        address platform = e.platform;
        address feeTo = e.feeTo;
        uint256 amount = e.amount;
        uint256 platformAmount = e.platformAmount;
        uint256 fee = e.fee;
        emit Released(id, cause, seller, amount, platform, platformAmount, feeTo, fee);
        IERC20 token = IERC20(_usdc);
        token.safeTransfer(seller, amount);
        if (platformAmount != 0) token.safeTransfer(platform, platformAmount);
        if (fee != 0) token.safeTransfer(feeTo, fee);
    }

    function _refund(bytes32 id, Escrow storage e, Cause cause) private {
        e.state = State.Refunded;
        address buyer = e.buyer;
        uint256 total = e.amount + e.platformAmount + e.fee;
        emit Refunded(id, cause, buyer, total);
        IERC20(_usdc).safeTransfer(buyer, total);
    }
}
