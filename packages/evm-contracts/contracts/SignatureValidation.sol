// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @notice Signature check with the semantics of Circle's FiatToken v2.2 `SignatureChecker`:
/// a 65-byte ECDSA signature by `signer` is accepted first (this keeps EIP-7702 delegated EOAs,
/// which have code, working with plain signatures), and otherwise the signer is asked through
/// EIP-1271. Both halves are OpenZeppelin's (`ECDSA.tryRecover` rejects malleable high-s
/// signatures and v other than 27/28; `SignatureChecker.isValidERC1271SignatureNow`).
library SignatureValidation {
    function isValidNow(address signer, bytes32 digest, bytes memory signature) internal view returns (bool) {
        if (signer == address(0)) return false;
        (address recovered, ECDSA.RecoverError err, ) = ECDSA.tryRecover(digest, signature);
        if (err == ECDSA.RecoverError.NoError && recovered == signer) return true;
        return signer.code.length != 0 && SignatureChecker.isValidERC1271SignatureNow(signer, digest, signature);
    }
}
