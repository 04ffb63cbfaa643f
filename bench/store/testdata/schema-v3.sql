-- A results store of schema version 3 holding ../render/testdata/single.json and ../render/testdata/split.json (runs 1 and 2) and the baseline main (run 1),
-- written by TestWriteFixture -update-fixture; kept as it is once a later version exists (TestMigrate).
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	started_ns BIGINT NOT NULL,
	recorded_ns BIGINT NOT NULL,
	host TEXT NOT NULL,
	host_cpu TEXT NOT NULL,
	prism_version TEXT NOT NULL,
	vcs_commit TEXT NOT NULL,
	command TEXT NOT NULL,
	config TEXT NOT NULL,
	env TEXT NOT NULL,
	interrupted INTEGER NOT NULL,
	interrupted_at TEXT NOT NULL,
	report_schema INTEGER NOT NULL,
	report BLOB NOT NULL
);
CREATE TABLE devices (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	device_id TEXT NOT NULL,
	name TEXT NOT NULL,
	vendor TEXT NOT NULL,
	kind TEXT NOT NULL,
	backend TEXT NOT NULL,
	platform TEXT NOT NULL,
	pci_bus_id TEXT NOT NULL,
	driver_version TEXT NOT NULL,
	api_version TEXT NOT NULL,
	clock_mhz INTEGER NOT NULL,
	compute_units INTEGER NOT NULL,
	global_mem_bytes BIGINT NOT NULL,
	error TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	UNIQUE (run_id, position)
);
CREATE TABLE results (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	device_ref BIGINT REFERENCES devices (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	kind TEXT NOT NULL,
	baseline_of BIGINT REFERENCES results (id) ON DELETE CASCADE,
	case_name TEXT NOT NULL,
	family TEXT NOT NULL,
	type TEXT NOT NULL,
	variant TEXT NOT NULL,
	requested TEXT NOT NULL,
	vendor_library INTEGER NOT NULL,
	size BIGINT NOT NULL,
	shape TEXT NOT NULL,
	group_devices TEXT NOT NULL,
	median_ns BIGINT NOT NULL,
	min_ns BIGINT NOT NULL,
	max_ns BIGINT NOT NULL,
	runs INTEGER NOT NULL,
	sample_count INTEGER NOT NULL,
	gbs DOUBLE PRECISION NOT NULL,
	gflops DOUBLE PRECISION NOT NULL,
	fraction DOUBLE PRECISION NOT NULL,
	bound TEXT NOT NULL,
	verified INTEGER NOT NULL,
	mismatch INTEGER NOT NULL,
	error TEXT NOT NULL,
	skipped TEXT NOT NULL,
	invalid TEXT NOT NULL
, samples BLOB NOT NULL DEFAULT X'', dims TEXT NOT NULL DEFAULT '');
CREATE TABLE baselines (
	name TEXT PRIMARY KEY,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	set_ns BIGINT NOT NULL
);
CREATE INDEX runs_started ON runs (started_ns, id);
CREATE INDEX runs_commit ON runs (vcs_commit);
CREATE INDEX runs_host ON runs (host);
CREATE INDEX devices_fingerprint ON devices (fingerprint);
CREATE INDEX results_case ON results (case_name, run_id);
CREATE INDEX results_run ON results (run_id);
INSERT INTO schema_version (version) VALUES (3);
INSERT INTO runs (id, started_ns, recorded_ns, host, host_cpu, prism_version, vcs_commit, command, config, env, interrupted, interrupted_at, report_schema, report) VALUES (1, 1795891105852299587, 1795921690670149175, 'vm', '', 'devel', '', '["prism","bench","--count=5","--device=opencl:0:0,opencl:1:0","--json=true","--ops=reduce/sum/float32,reduce/sum/float64,stream/triad/float32","--out=/tmp/fx/multi.json","--quick=true","--quiet=true","--sizes=64K","--warmup=1"]', '{"ops":["reduce/sum/float32","reduce/sum/float64","stream/triad/float32"],"sizes":[65536],"quick":true,"count":5,"warmup":1,"seed":1,"portable":false}', 'null', 0, '', 1, X'1f8b08000000000004ffdc586d8f233911fe3ebfa2640909c426d37e6d77d07cd89b4570ba5d581d0712a055e4749cc44cbf5db73b3b7368ff3b2a7777e24e02c78a0371f77c4aec72b9ecaa7aaadc7fbf03205d7eb0a5212ba0aff06fd3baae5c1f6ddbb9ba222b205b7bb40509735be32d0eb184a905a50ba6bfa17ac5f58ac9a5968c6599d4e95f06d943dd79943d96c3ff7d1d2bddd774c9d4524f737587b285abfae769c8b4f901074db9556218ccebb234d596ace0af77000083b1610e806c6c951fa63f8b455ef7957f90e781ad3dbadc3ed48dadf26295ac9257e34fba4ace527febeaeac1b7bd3d0fd54df7d0da6d9fdbfbae2fef77456d3c67af2e879478d5f9d69af2deb7ce6c27b9484fef1fee7dd9dcef9eefcbbef06e899b9de7bfed5dfe74b1f7b7bdb3fe62ac73dfd9ee4189afce4b3f9ab6ec9b074aee003e045fe575b5737bb202743200a91bbce2e1de00c8a5f17cb2f3c6dc78fd0872f384c119615b8c27b4eee422002525573389704eb202bc65b4158004679115c8f1ff709e292851abb5e8f710a3e8f8baf566536034ee4cd1d93b804fb814a3d5e5f6bcff707a98264ef781200e5592310a9253142048654a94268d3fb4d66c17ddd34b619eecc21c9f25658bd7efdec0afdffff9717401821c6db5ad5b8cd9d7bd3fd8cabbfcf5bb37b1445318bfabdb1265de8f4780c7ba6c7aefaa3dbc35d5be37fb29f410e4c985802779d3c79a4ce3e27cfa7d63abc7b7c09709bcaf1fdfc26ffff0cdd72b986c7fd66aadc4a2c91721c316fbaabf384fac7adbbaa36d63ed7c497fb9b51b67a660459062b436961ced7804ba64c19258711e0e6ad77de53c7a88a1c70690bca8f3a77579f88eac80c94c4553fba2de98625dda72bd79f1c1b752242ac9322163b9d23caf4d51d4f9498c51910acd95d091baa2ce2fb4d1446899c6aa72931fec490de7520ac1637371af8f75fbb4deb775dfac31e6c90a443233fc24e4bc2d830c9e7a4a41c47c01dcfc1f520731261882ec1a2566198420bb862ab21a32223ab1abbc126be3ebd2e56801e6dda835240d826c4cfe6487501b12e2e439925b57b86a8f4ba7740a29dbbcacf71b1ca57cc995a68a52a6144d3515d1ee39ca1dea8f18f39b7eb7b32de0d049fda46af2ad4a69a2b58a55ec1aced6fb5d3170984a9769a65492a5524bc1474a40846b390b0ab99442482585d24a892456d958f33459a5c1555bdbd86a6b2b0fa5d9427e30aeeae01958223474de361dd41568284c653b686c0be8fd053af6d52074fadf81ab20844507f50e9854033f8e0c8520f5d1b6076bb67879d195ee5cdbf9f5a677c5765de19c48b8c87812876667f3badace8438a754a42375224861fa2a3fac4df752e5832629551a39651438cf53a928bf0a0a6f0b5b5adfbecc79d31c8d2b62fa8d34b7d67443e3e00f16869a0bad45c2eea0aae1fde397b0e93bf8f20dfcfc777f7af7163a533685ede037efffd8c1e6659cfc451c1fa308594112ede42a6fdb23e632ceb024b932bfb55d5f04aa3927ddf9ba31f04c87797bbbaa9db702203b53ba02af61949dcffa9726e8195b83f9e4480ea10ece747607332cab1ec2e47cd9d1b4ce545814095e5eb8eed9f2c187579c02b32322c8936d2b5b60020ee57b1d1a94993604d9200947a5fb0c26cf3c342062a301d88c1d8d3fd3264d58947103ce9c1832249022b924ce01a469edceb6adddae43b3d4846aaf47270ff814fd9b19443a6f82e36377636bd387bc8a7205414abb75a61a3285892c8b5205414a779a14fa6ad23c8f2b95c8b2d845d8b70cd13d089ca370c08d05004c6a7ea1056e19858357c6e0a09269742d001fa27f27be4760b886ae90729aa45179c3667aacb4a956b3ca074006cee77429144da4e44c299ed16ce66b72626bb96482cb24638cd244c9b88ae236753fd49cd296751b17050062bc37aec2c03f733a5b32a613a6345664c52f428cec5a93fbe1e1c2965c72c169aa95a642d08b03225fbb6abfeeac3f959e1b871d3a81d6760e8bc355c905ecfadaadcb71ea22d64e9d1b361317c946bc7dc62583fec5a47f15ca08b6829df5902a0d5fb92f60e77c282a48a89cc13bf70514a6f38b025f6610d4ff0a18973fc37a83426fbe7efd2e145968eb7a37951fc4dcff47dbba9d0b8d75d41344856ace2564a2cb7ff1784044643948ce0effe321cbc1f875d7cfd91ef11f5265117ad029c76e1265d3fe34d8945316375e88884e59a6e2060e114a446069263311b7e588a9171824ae08f5c66ec8a8d77a0018cb52cde7741d46af2c42524d29ff5c560d353dd64f268733c568fc2639912a5d52ce35d7928a2c1152abf9fa13a9264ba6b99092275c0a2a146573c1cfa655bee482663a635a6542e8b899c4e6e7ccaac932d14253c505a54a276276813749f5c6618fdf479937aa019c3973985d844382f1a003f1e1a302df3e2decdaba0c3c58b8d2f9ff3efd45df47109f437f974bff9f7ac5ff15fde11b2b4e13c44f87feb44caebacd5337c95331cf2088e98f675ccef2fa7bfbc91bbb01dcd21346d99c3510b72c4259fc8812b591ff4e53f9cfe94f32c1e20f2527fa634b9a692633fcb22332aea3a73dca4c1f0092254b459a6a8efda41052b0390b0562c0d7ce4014f3eee3565349972ac5cf494a709132c1d3792f3ba33faa84e059a6b4c874966472f61ab84980378efb031320553f34038ebe3ebda98877a5abf073f2f88515ecd156be237700009fee003edc7dbafb47000000fffff4ebc4fa50180000');
INSERT INTO runs (id, started_ns, recorded_ns, host, host_cpu, prism_version, vcs_commit, command, config, env, interrupted, interrupted_at, report_schema, report) VALUES (2, 1795891445757487847, 1795921690671833162, 'vm', '', 'devel', '', '["prism","bench","--count=5","--device=opencl:0:0,opencl:0:1","--json=true","--ops=reduce/sum/float32","--out=split.json","--quiet=true","--sizes=64K,256K","--split=true","--warmup=1"]', '{"ops":["reduce/sum/float32"],"sizes":[65536,262144],"quick":false,"count":5,"warmup":1,"seed":1,"portable":false}', 'null', 0, '', 1, X'1f8b08000000000004ffec594b8fdcb811becfaf20788d5bcbf7a3813918b30102ac173192bd2481d1d0a8d9ddcae8b57ab46736d8ff1e941e14a5d6d8ebf86004f0779a6691c5e2c78fc5a2e63f7708e126b9b83cc67b44dfc0cfaa4e9bfc707575939605de237c745797e1de768c5b074d8c30b5a374c7cc2fd4ec85d8131969a985d146e87f0e7d2f65d342df6b3efc3e97a1d3734923a62233d9ca06fa6669d13d4f4d719d5ca031ce8f4a0c8d4999e77171c47bf4af3b84101a82ed6d08e147572497e9c76e97945dd1decbb9e1e8ae69e2eecbca1549b6277bf2c6ff49e75eff6ecae2bead3b37379555735fbb6397b81f9a2effe1949571cb5960efdafba6cad23682c173fbaf5deada95af26fdcd35f74afcf48649f5d3dcb71fbfeafb31aef3aebaa7f80ea10ffd062465714acf788f60e710c26505bc0d6420843782ec79ea07c356c3e49e3d8494945c816300538c0ab1e8ff6b97264f788f4e71d6b8a11fee69c57b24c7df4390937c6012e760877a35c11695751b3f66a09bdecd1d42bfc350d0559ab8399c61496832f84502700a2eb1df2f321207c0459c436f5cb597dac5c75df3f492c54f6e175f9f2565bbb73fff88fefcfe1f0fe190ab2b8e650dea7adbb51757b469f2f6e71fc31e5516b7a7b2cea1cffb7109e8a1ccabae4d8b337a1717e72e3e4f2201e0a7b497264eaa2ef4145769a8fcbf56ae7878877844d0fbf2e11dfacbdf7ff9db1e4db13f1b7550625725bbfe2cecce45b75a4fe8fa58a7575787de7944ff74748f693cc91080b331dab0e718c703a211eb23091d27fd42dda12bd2167688c18e0dc04956264f87fcf21bde2326add70f42f89c958f7176c85d7e787c69fbbd958a68c11411267091c7cf8738cbcac47763546861b85a74cbca64e58d1261a40ea74ce2e4e2bc1bcea5148287e1c25c1fcbfae970aecbae3ac011c07b24c82270df296d5ddef781554fe70ab01c80367ff76707309e37003e554ae03d828c123070aaa85a1e2c004e8b568943dc96799a4004306af4da1f1a007e8c932737486d38107ee770e2d22c2dce30743a4e088e6cf572383f422b096248a0f9527e04897b1753f769ffc201a78ab3c3f9940d5967695162db52b9f8c94f72b394f2eaea8b8b8f105a10f029ad9bf6f0d8a5d9f150802d9cab7149591c5fb3667157249743dcbc14c9edd8d11a186f426a5de672d7d62fcb04145fe3340bf358406413e755d62b268c332d5a575f41c0fd0a6e26aa5dd365fde92aba2cebcde31e4f4c8c297219c82a134e3717e07b260cca96ef99f07b26fc9e09ff6f33a12f79fbc21832e8701bfbdc98c40d64c6ad9a774acd63fe9c0703c63b13ea7fdfb1afa4c757415f6d03fc258ec79a61512de3e612577d00c57d6ff0cec052af269da2068c51c1ad3b5cdfab5010c253d9155c2708e1531d27edf0285b1aeae15946b9249219aa22c38c117aacc007c0d321e9eada15ed61ec2fad1294591e514918518cf5771060bc87009f8b3cbc7f82c87b4aa67d0084d12f031ba351824ac9b5e211a1d650ae17a3b3b87545f232dce88c09a5c4c29e94ebd5516a25534cf088302398a2c3d30600e202043bdcc6bdc6e6d5e2baeb2b8ff19903c0b93ba67131c6a0a920410c384f278b5486ae2bd0de1767c29a70cc58380cd641df03981692db70854c29cb821a1aa1f53ce8c63f4243947e5f3f8c7ff9fdc54d5a9cfbb7d93cfbcc41f8167b55abb7d40136e8032c281482ae9684021a39e142063402fa3abda79251226858e7035ee713a008e74b06019b8ed0e6ec68336284b85286ccc53f60221ae0c90640d5971e5d012fe8906878bcdf080eb0608c734a250f65b1608c124e16670bacf1f3c09890da3011a80ff069c6b61c22c485546ce5076d86068ad4422e540b184319c53860c198b704dc856c6da5d05522fa0a595aa36e85379d6eaeb5d0afca526ac98c59efd0abc71cb0e51021a1adbd2579d33d42524aa36f59eed7e1a9042c480e65f475b264da5ab3c8f620bc8931a60c638b5c06d649969c69b356c8a709db9a0d321db1f656951bded166440831c32de3aff3e52dd35fc1f5513977ecfa8f60916286134e2dd78a193227717c8a9bd60ddf4437ee7d3cfa38d4ce27081a114e15235a6a26b4b0c6eb0ecfaff088092a34618608a58515d65f9c787cf247564963a5518408c5b4f67b81afae4e4f69ffb9ce7f691875311db76f50670d1f222779423935155a83e5db575a922a66ad2136e2c26a4196e2df284698b58470ce7524a8d244d3f9ba18f9064c9c03fe408a9baac48195892fc0678b2dce8865427223222539917c91b256d596e081f2001b0ba48471a6846426528c1029e6c4b3715cbeb8dae25c53ebd50ff9c36717c3340b2ebdb944e0861011966fafa6e1754fb8e394a5fe2001d611c0ddc6b90866860c02b1f83c31655bbfc3dfb4da6296b2b0f8040445abb1dc2c160324fb24ad259bd3c680d7e9046c8d80aaca0abb78bb00b62203326f23ea5ba59e29064c34033cd580afbbd438359c2f4e153032c98e53616e1899f962422f8f14fc5f64f84a38546373b93d606b442f314657bb82362383564dd6650bb4429c5e9280055fde1230f78569e8f63403fed00380596efc6d346096249746cb9b0d9824a9a51437d64f52bc350221c58531419618b0151914fa5a491d265ac010a72712b0a038ecff7592949c1111644140c017676c5d32ce92842f0292b0459eff9c28b7c720243597cbf737602b3a848492267c270f18627d9d336f99fedaaab548641437921161941162ae31ff87528b445608a2b9208a09cbe47ca387a596d65a7026042392187a5369f18812ab05559c18432c9bd9deaeb4ee10fa70f7fbdd7f030000fffffe741b4a861f0000');
INSERT INTO devices (id, run_id, position, device_id, name, vendor, kind, backend, platform, pci_bus_id, driver_version, api_version, clock_mhz, compute_units, global_mem_bytes, error, fingerprint) VALUES (1, 1, 0, 'opencl:0:0', 'pthread-skylake-avx512-AMD EPYC', 'AuthenticAMD', 'cpu', 'opencl', 'Portable Computing Language', '', '3.1+debian', 'OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512', 2596, 2, 5406099456, '', '5d1f6796436876a0');
INSERT INTO devices (id, run_id, position, device_id, name, vendor, kind, backend, platform, pci_bus_id, driver_version, api_version, clock_mhz, compute_units, global_mem_bytes, error, fingerprint) VALUES (2, 2, 0, 'opencl:0:0', 'pthread-skylake-avx512-AMD EPYC', 'AuthenticAMD', 'cpu', 'opencl', 'Portable Computing Language', '', '3.1+debian', 'OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512', 2596, 2, 5607426048, '', '5d1f6796436876a0');
INSERT INTO devices (id, run_id, position, device_id, name, vendor, kind, backend, platform, pci_bus_id, driver_version, api_version, clock_mhz, compute_units, global_mem_bytes, error, fingerprint) VALUES (3, 2, 1, 'opencl:0:1', 'pthread-skylake-avx512-AMD EPYC', 'AuthenticAMD', 'cpu', 'opencl', 'Portable Computing Language', '', '3.1+debian', 'OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512', 2596, 2, 5607426048, '', '5d1f6796436876a0');
INSERT INTO results (id, run_id, device_ref, position, kind, baseline_of, case_name, family, type, variant, requested, vendor_library, size, shape, group_devices, median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims) VALUES (1, 1, 1, 0, 'case', NULL, 'stream/triad/float32', 'stream', 'float32', 'portable', '', 0, 65536, 'n=65536', '', 24997, 24487, 26499, 5, 5, 31.461055326639194, 5.243509221106532, 2.3534317868144172, 'memory', 1, 0, '', '', '', X'01869e03a70a930dfb07d402', '');
INSERT INTO results (id, run_id, device_ref, position, kind, baseline_of, case_name, family, type, variant, requested, vendor_library, size, shape, group_devices, median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims) VALUES (2, 1, 1, 1, 'case', NULL, 'reduce/sum/float32', 'reduce', 'float32', 'portable', '', 0, 65536, 'n=65536', '', 231204, 229631, 259476, 5, 5, 1.1338385149045866, 0.28345530354146126, 0.084816341168043, 'memory', 1, 0, '', '', '', X'01c89c1ce0b903f9cf03af02c49102', '');
INSERT INTO results (id, run_id, device_ref, position, kind, baseline_of, case_name, family, type, variant, requested, vendor_library, size, shape, group_devices, median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims) VALUES (3, 1, 1, 2, 'case', NULL, 'reduce/sum/float64', 'reduce', 'float64', 'portable', '', 0, 65536, 'n=65536', '', 238505, 237443, 239356, 5, 5, 2.198259994549381, 0.27477830653445423, 0.16443996849890957, 'memory', 1, 0, '', '', '', X'01d28e1da60d8302ed1bb20e', '');
INSERT INTO results (id, run_id, device_ref, position, kind, baseline_of, case_name, family, type, variant, requested, vendor_library, size, shape, group_devices, median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims) VALUES (4, 2, NULL, 0, 'split', NULL, 'reduce/sum/float32', 'reduce', 'float32', '', '', 0, 65536, 'n=65536', 'opencl:0:0,opencl:0:1', 271404, 256812, 324984, 5, 5, 0.9658958600462779, 0.24147028046749497, 0, '', 1, 0, '', '', '', X'01d6c121f576879e0198a90897c506', '');
INSERT INTO results (id, run_id, device_ref, position, kind, baseline_of, case_name, family, type, variant, requested, vendor_library, size, shape, group_devices, median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims) VALUES (5, 2, NULL, 1, 'split', NULL, 'reduce/sum/float32', 'reduce', 'float32', '', '', 0, 262144, 'n=262144', 'opencl:0:0,opencl:0:1', 337192, 282721, 380045, 5, 5, 3.1097416308809223, 0.7774324420508197, 0, '', 1, 0, '', '', '', X'019ab22ecf8504f99701b5d801d7fa04', '');
INSERT INTO baselines (name, run_id, set_ns) VALUES ('main', 1, 1795921690672234339);
