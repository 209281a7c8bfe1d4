using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace MuxWatch.Testing;

/// <summary>A test PKI made in memory: a root CA, an intermediate CA it signed, a server certificate the intermediate signed, another root.</summary>
public static class TestCertificates
{
    /// <summary>
    /// Writes <c>ca.pem</c> (the root), <c>intermediate.pem</c>, <c>bundle.pem</c> (root and intermediate),
    /// <c>chain.pem</c> (the server's certificate, then the intermediate: what the server presents),
    /// <c>server.key</c> and <c>other-ca.pem</c> into <paramref name="directory"/>. The server's certificate names
    /// <c>localhost</c> and <c>127.0.0.1</c>; everything is valid for two days, but an expired intermediate ended yesterday.
    /// </summary>
    public static void WriteChain(string directory, bool expiredIntermediate)
    {
        var now = DateTimeOffset.UtcNow;
        using var rootKey = RSA.Create(2048);
        using var root = Authority("MuxWatch Test Root CA", rootKey, issuer: null, issuerKey: null, now.AddDays(-2), now.AddDays(2));
        using var intermediateKey = RSA.Create(2048);
        using var intermediate = Authority("MuxWatch Test Intermediate CA", intermediateKey, root, rootKey,
            now.AddDays(-2), expiredIntermediate ? now.AddDays(-1) : now.AddDays(2));
        using var otherKey = RSA.Create(2048);
        using var other = Authority("Some Other CA", otherKey, issuer: null, issuerKey: null, now.AddDays(-2), now.AddDays(2));

        using var serverKey = RSA.Create(2048);
        var request = new CertificateRequest("CN=localhost", serverKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(System.Net.IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, critical: true));
        using var server = request.Create(intermediate.SubjectName, X509SignatureGenerator.CreateForRSA(intermediateKey, RSASignaturePadding.Pkcs1),
            now.AddDays(-1), now.AddDays(1), [1, 2, 3, 4]);

        string File(string name) => Path.Combine(directory, name);
        System.IO.File.WriteAllText(File("ca.pem"), root.ExportCertificatePem() + "\n");
        System.IO.File.WriteAllText(File("intermediate.pem"), intermediate.ExportCertificatePem() + "\n");
        System.IO.File.WriteAllText(File("bundle.pem"), root.ExportCertificatePem() + "\n" + intermediate.ExportCertificatePem() + "\n");
        System.IO.File.WriteAllText(File("chain.pem"), server.ExportCertificatePem() + "\n" + intermediate.ExportCertificatePem() + "\n");
        System.IO.File.WriteAllText(File("server.key"), serverKey.ExportPkcs8PrivateKeyPem() + "\n");
        System.IO.File.WriteAllText(File("other-ca.pem"), other.ExportCertificatePem() + "\n");
    }

    private static X509Certificate2 Authority(string name, RSA key, X509Certificate2? issuer, RSA? issuerKey, DateTimeOffset from, DateTimeOffset to)
    {
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        return issuer is null
            ? request.CreateSelfSigned(from, to)
            : request.Create(issuer.SubjectName, X509SignatureGenerator.CreateForRSA(issuerKey!, RSASignaturePadding.Pkcs1), from, to, [5, 6, 7, 8]);
    }
}
